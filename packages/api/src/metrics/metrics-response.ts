import type { ApiDeps } from "../deps.ts";
import type { ApiMetrics } from "./metrics-registry.ts";

/** GET /metrics: the app's registry followed by the process's own text (deps.metricsText). */
export async function metricsResponse(metrics: ApiMetrics, deps: ApiDeps): Promise<Response> {
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
