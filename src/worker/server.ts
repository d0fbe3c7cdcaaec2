/**
 * The worker's HTTP face: `GET /healthz` (200 or 503, JSON) and `GET /metrics` (Prometheus text).
 * node:http only: two routes do not justify a framework.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../runtime/logger.js';
import type { HealthReport } from './status.js';

export interface HealthServerOptions {
  /** 0 picks a free port (tests); the bound port is returned and logged. */
  readonly port: number;
  /** Listen address; default all interfaces (container health checks and Prometheus scrapes). */
  readonly host?: string;
  readonly logger: Logger;
  readonly health: () => Promise<HealthReport>;
  readonly metrics: () => Promise<{ body: string; contentType: string }>;
}

export interface HealthServer {
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { logger } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, contentType: string, body: string) => {
      res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (path === '/healthz') {
      options.health().then(
        (report) =>
          send(report.status === 'ok' ? 200 : 503, 'application/json', `${JSON.stringify(report)}\n`),
        (err: unknown) => {
          logger.error({ err }, 'health check failed');
          send(
            503,
            'application/json',
            `${JSON.stringify({ status: 'unhealthy', database: 'unreachable', tenants: [] })}\n`,
          );
        },
      );
      return;
    }
    if (path === '/metrics') {
      options.metrics().then(
        (m) => send(200, m.contentType, m.body),
        (err: unknown) => {
          logger.error({ err }, 'metrics collection failed');
          send(500, 'text/plain; charset=utf-8', 'metrics collection failed\n');
        },
      );
      return;
    }
    send(404, 'text/plain; charset=utf-8', 'not found: try /healthz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(listenError(err, options.port));
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'health and metrics listening');
  let closed: Promise<void> | undefined;
  return {
    port,
    server,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive scrapers would hold close() open forever.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/**
 * A port in use or not ours to bind is a configuration problem the operator fixes with
 * GOVTRAIL_HTTP_PORT: a ConfigError (exit 2, one line), not a stack trace.
 */
function listenError(err: Error, port: number): Error {
  const code = (err as { code?: unknown }).code;
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      'GOVTRAIL_HTTP_PORT',
      `port ${port} is already in use: stop the other process or choose another port`,
      { cause: err },
    );
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ConfigError('GOVTRAIL_HTTP_PORT', `cannot listen on port ${port}: ${err.message}`, {
      cause: err,
    });
  }
  return err;
}
