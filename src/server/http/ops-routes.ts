import type { Registry } from 'prom-client';
import type { ReadinessProbe } from '../../telemetry/health.js';
import { route, type HttpRoute } from './routes.js';

/**
 * `/healthz` (the process answers), `/readyz` (store reachable, claim loop alive: 503 with the
 * failing check otherwise) and, with a registry, `GET /metrics` in Prometheus text format.
 * The probes answer without authentication (an orchestrator sends no credentials; they reveal
 * only liveness and the names of failing checks); `/metrics` goes through `authenticate` like
 * every other route.
 * @example
 * const readiness = readinessProbe({ store, now: () => Date.now() });
 * const metrics = createMetrics();
 * await server.serveHttp({ routes: operationsRoutes({ readiness, registry: metrics.registry }) });
 */
export function operationsRoutes(options: {
  readonly readiness?: ReadinessProbe;
  readonly registry?: Registry;
}): HttpRoute[] {
  const routes: HttpRoute[] = [
    route('GET', '/healthz', () => Promise.resolve(Response.json({ status: 'alive' })), { unauthenticated: true }),
  ];
  const { readiness, registry } = options;
  if (readiness !== undefined) {
    routes.push(
      route(
        'GET',
        '/readyz',
        async () => {
          const report = await readiness.check();
          return Response.json(report, { status: report.ready ? 200 : 503 });
        },
        { unauthenticated: true },
      ),
    );
  }
  if (registry !== undefined) {
    routes.push(
      route('GET', '/metrics', async () => {
        const body = await registry.metrics();
        return new Response(body, { headers: { 'content-type': registry.contentType } });
      }),
    );
  }
  return routes;
}
