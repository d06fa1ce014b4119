/**
 * How the console writes the figures of runs and usage: dollars, tokens, durations and times.
 * One place, so the runs table, the run detail and the costs screen agree digit for digit.
 */
import type { Cost } from "@promptrun/contract";

/**
 * US dollars. Run costs are often fractions of a cent, so amounts under a cent keep six decimals
 * (a millionth of a dollar: one output token of a $1/M model), larger ones four, large ones two.
 */
export function formatUsd(value: number): string {
  const abs = Math.abs(value);
  const digits = abs === 0 ? 2 : abs < 0.01 ? 6 : abs < 100 ? 4 : 2;
  return `${value < 0 ? "-" : ""}$${abs.toFixed(digits)}`;
}

const integers = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** A token or run count, with thousands separators. */
export const formatCount = (value: number): string => integers.format(value);

/** `1.4 s`, `320 ms`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/** A timestamp in the reader's time zone: `05 May 2026, 14:03:12`. */
export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));

/**
 * The last 8 characters of a UUID: enough to tell runs and threads apart on screen. Not the first
 * ones: ids are time-ordered UUIDv7s, whose first block is the same for everything of one hour.
 */
export const shortId = (id: string): string => id.slice(-8);

/** How long a run took (from its start, else its creation), or null while it has not ended. */
export function runDurationMs(run: {
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}) {
  if (!run.finishedAt) return null;
  return new Date(run.finishedAt).getTime() - new Date(run.startedAt ?? run.createdAt).getTime();
}

/** A cost whose model has no known price: its figures are 0 but unknown (docs/PRODUCT-RULES.md "Runs"). */
export const isUnpriced = (cost: Cost): boolean =>
  cost.success.priced === false || cost.retries.priced === false;

const clockTime = new Intl.DateTimeFormat("en-GB", {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  fractionalSecondDigits: 3,
});

/** The time of day with milliseconds (`14:03:12.481`): when a live event arrived. */
export const formatClockTime = (iso: string): string => clockTime.format(new Date(iso));
