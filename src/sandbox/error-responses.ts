/**
 * What the sandbox sends when it answers with an error, shaped as the real service's: grpc-gateway
 * errors for the API, OAuth 2.0 errors for the token endpoint, the load balancer's HTML pages, and
 * an injected fault's status (server.ts serves them).
 */
import type { ServerResponse } from 'node:http';
import type { FaultRoute } from './faults.js';
import { send } from './respond.js';

const GRPC_CODE_OF_STATUS: Readonly<Record<number, number>> = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  409: 6,
  429: 8,
  500: 13,
  503: 14,
  504: 4,
};
const OAUTH_ERROR_OF_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'invalid_client',
  403: 'unauthorized_client',
  429: 'temporarily_unavailable',
  500: 'server_error',
  503: 'temporarily_unavailable',
};
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** A grpc-gateway error response. */
export function sendGrpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  const code = GRPC_CODE_OF_STATUS[status] ?? 2;
  send(res, status, JSON.stringify({ code, message, details: [] }), 'application/json', headers);
}

export function sendOAuthError(
  res: ServerResponse,
  status: number,
  description: string,
  headers: Record<string, string> = {},
) {
  const error = OAUTH_ERROR_OF_STATUS[status] ?? 'server_error';
  send(res, status, JSON.stringify({ error, error_description: description }), 'application/json', headers);
}

/** The page an nginx-style load balancer sends for its own errors. */
export function lbPage(status: number): string {
  const title = `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
}

/**
 * An injected HTTP status: the fault's own body when it has one, else what would really send
 * that status (the load balancer's HTML page, the token endpoint's OAuth error or Go's plain 404,
 * a grpc-gateway error).
 */
export function sendInjectedStatus(
  res: ServerResponse,
  status: number,
  body: string | undefined,
  route: FaultRoute,
  headers: Record<string, string>,
): void {
  if (body !== undefined) {
    send(res, status, body, isJsonText(body) ? 'application/json' : 'text/plain; charset=utf-8', headers);
  } else if (status === 408 || status === 502 || status === 504) {
    send(res, status, lbPage(status), 'text/html', headers);
  } else if (route === 'token') {
    if (status === 404) send(res, 404, '404 page not found\n', 'text/plain; charset=utf-8', headers);
    else sendOAuthError(res, status, `injected ${status}`, headers);
  } else {
    sendGrpcError(res, status, injectedMessage(status), headers);
  }
}

export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function injectedMessage(status: number): string {
  switch (status) {
    case 429:
      return 'rate limit exceeded';
    case 503:
      return 'service unavailable: upstream connect error';
    case 500:
      return 'internal error';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'permission denied';
    case 404:
      return 'not found';
    default:
      return STATUS_TEXT[status] ?? 'error';
  }
}
