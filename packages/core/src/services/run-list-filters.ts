import {
  type RunListFilters,
  USAGE_MAX_RANGE_DAYS,
  type UsageRequest,
  type UsageResponse,
  usageRequestSchema,
} from "@promptrun/contract";
import { invalid } from "../errors.ts";
import type { Clock, RunListFilter, Store } from "../ports.ts";
import { formatValidationError } from "./format-validation-error.ts";

/** The service's filters (validated by the contract schemas) as the store's RunListFilter. */
export const toStoreFilter = (filter: RunListFilters & { slug?: string }): RunListFilter => {
  const slug = filter.prompt ?? filter.slug;
  if (filter.version !== undefined && slug === undefined) throw invalid("version needs prompt");
  return {
    ...(filter.thread !== undefined && { threadId: filter.thread.toLowerCase() }),
    ...(filter.channel !== undefined && { channel: filter.channel }),
    ...(slug !== undefined && { slug }),
    ...(filter.version !== undefined && { version: filter.version }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.phase !== undefined && { phase: filter.phase }),
    ...(filter.environment !== undefined && { environment: filter.environment }),
    ...(filter.metadata !== undefined && { metadata: filter.metadata }),
    ...(filter.createdAfter !== undefined && { createdAfter: new Date(filter.createdAfter) }),
    ...(filter.createdBefore !== undefined && { createdBefore: new Date(filter.createdBefore) }),
  };
};

const DAY_MS = 86_400_000;

/** A date (`YYYY-MM-DD`, a UTC day's start) or a date-time. */
const instantOf = (text: string): Date => new Date(text.length === 10 ? `${text}T00:00:00Z` : text);

/** Default: the last 30 UTC days, today included (from = 29 days before today's start, to = tomorrow's). */
const defaultRange = (now: Date): { from: Date; to: Date } => {
  const tomorrow = Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS;
  return { from: new Date(tomorrow - 30 * DAY_MS), to: new Date(tomorrow) };
};

/** [from, to) of a usage request: a missing end is 30 days from the other; at most 366 days. */
export const usageRange = (request: { from?: string; to?: string }, now: Date): { from: Date; to: Date } => {
  const fallback = defaultRange(now);
  const to = request.to !== undefined ? instantOf(request.to) : undefined;
  const from = request.from !== undefined ? instantOf(request.from) : undefined;
  const range = {
    from: from ?? (to ? new Date(to.getTime() - 30 * DAY_MS) : fallback.from),
    to: to ?? (from ? new Date(from.getTime() + 30 * DAY_MS) : fallback.to),
  };
  if (range.to.getTime() <= range.from.getTime()) throw invalid("'to' must be after 'from'");
  if (range.to.getTime() - range.from.getTime() > USAGE_MAX_RANGE_DAYS * DAY_MS) {
    throw invalid(`the range from 'from' to 'to' must be at most ${USAGE_MAX_RANGE_DAYS} days`);
  }
  return range;
};

/** The usage report of a tenant: a store GROUP BY over its ended runs. */
export async function runUsage(
  store: Store,
  clock: Clock,
  tenantId: string,
  request: UsageRequest,
): Promise<UsageResponse> {
  const parsed = usageRequestSchema.safeParse(request);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error, "query"));
  const { groupBy, environment, prompt } = parsed.data;
  const range = usageRange(parsed.data, clock.now());
  const items = await store.runs.usage(tenantId, {
    ...range,
    groupBy,
    ...(environment !== undefined && { environment }),
    ...(prompt !== undefined && { slug: prompt }),
  });
  return { items };
}
