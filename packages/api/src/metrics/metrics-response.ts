import type { ApiDeps } from "../deps.ts";
import { errorResponse } from "../errors.ts";
import { adminTokenMatches } from "../trpc/context.ts";
import type { ApiMetrics } from "./metrics-registry.ts";

const BEARER = /^Bearer (\S+)$/i;

/** With `config.metricsToken` set, only `Authorization: Bearer <that token>` may scrape. */
function scrapeAllowed(request: Request, metricsToken: string | undefined): boolean {
  if (metricsToken === undefined || metricsToken === "") return true;
  const presented = BEARER.exec(request.headers.get("authorization") ?? "")?.[1] ?? null;
  return adminTokenMatches(presented, metricsToken);
}

/** GET /metrics: the app's registry followed by the process's own text (deps.metricsText). */
export async function metricsResponse(
  metrics: ApiMetrics,
  deps: ApiDeps,
  request: Request,
): Promise<Response> {
  if (!scrapeAllowed(request, deps.config.metricsToken))
    return errorResponse("unauthorized", "metrics need Authorization: Bearer <PROMPTRUN_METRICS_TOKEN>", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  const parts = [await metrics.text()];
  if (deps.metricsText) parts.push(await deps.metricsText());
  const body = parts
    .map((part) => part.trimEnd())
    .filter((part) => part !== "")
    .join("\n\n");
  return new Response(`${body}\n`, {
    headers: { "content-type": metrics.contentType, "cache-control": "no-store" },
  });
}
