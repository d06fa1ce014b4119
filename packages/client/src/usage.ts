import { type UsageRequest, type UsageResponse, usageResponseSchema } from "@promptrun/contract";
import { type ClientRequest, queryString } from "./client-request.ts";

/** Options of `usage` (GET /api/v1/usage); dates are `YYYY-MM-DD` or ISO date-times (or Dates). */
export interface UsageOptions extends Omit<UsageRequest, "from" | "to"> {
  from?: string | Date;
  to?: string | Date;
  signal?: AbortSignal;
}

const isoOf = (value: string | Date | undefined): string | undefined =>
  value instanceof Date ? value.toISOString() : value;

/** Usage and cost of ended runs created in [from, to), grouped (default by UTC day). */
export const getUsage = (
  request: ClientRequest,
  { signal, from, to, ...rest }: UsageOptions = {},
): Promise<UsageResponse> =>
  request(
    "GET",
    `/api/v1/usage${queryString({ ...rest, from: isoOf(from), to: isoOf(to) })}`,
    usageResponseSchema,
    {
      signal,
    },
  );
