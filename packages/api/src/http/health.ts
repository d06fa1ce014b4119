import type { ApiDeps } from "../deps.ts";
import { jsonResponse } from "./json-response.ts";

/** GET /health: 200 `{"status":"ok", ...details}`, or 503 with an error body when a dependency is down. */
export async function healthResponse(deps: ApiDeps): Promise<Response> {
  const noStore = { "cache-control": "no-store" };
  if (!deps.health) return jsonResponse(200, { status: "ok" }, noStore);
  let report: Awaited<ReturnType<NonNullable<ApiDeps["health"]>>>;
  try {
    report = await deps.health();
  } catch (error) {
    deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, "health check threw");
    return jsonResponse(
      503,
      { status: "unavailable", error: "health check failed", code: "unavailable" },
      noStore,
    );
  }
  if (report.ok) return jsonResponse(200, { ...report.details, status: "ok" }, noStore);
  return jsonResponse(
    503,
    { ...report.details, status: "unavailable", error: "service unavailable", code: "unavailable" },
    noStore,
  );
}
