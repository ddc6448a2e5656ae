import type { Registry } from 'prom-client';
import type { ReadinessProbe } from '../../telemetry/health.js';
import { route, type HttpRoute } from './routes.js';

/**
 * `/healthz` (the process answers), `/readyz` (store reachable, claim loop alive: 503 with the
 * failing check otherwise) and, with a registry, `GET /metrics` in Prometheus text format.
 * They go through the server's `authenticate` hook like every route: a probe sends no credentials,
 * which a hook MUST answer with `undefined` (anonymous), not a rejection.
 */
export function operationsRoutes(options: {
  readonly readiness?: ReadinessProbe;
  readonly registry?: Registry;
}): HttpRoute[] {
  const routes: HttpRoute[] = [route('GET', '/healthz', () => Promise.resolve(Response.json({ status: 'alive' })))];
  const { readiness, registry } = options;
  if (readiness !== undefined) {
    routes.push(
      route('GET', '/readyz', async () => {
        const report = await readiness.check();
        return Response.json(report, { status: report.ready ? 200 : 503 });
      }),
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
