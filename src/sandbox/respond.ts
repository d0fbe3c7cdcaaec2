/** Writing whole HTTP responses. */
import type { ServerResponse } from 'node:http';

/** Writes a complete response with a content length. */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'application/json',
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** Writes a complete JSON response whose body is already encoded. */
export function sendBytes(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}
