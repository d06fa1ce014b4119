/**
 * The ranges of the costs screen: the last N UTC days, today included, as `from`/`to` of
 * `GET /api/v1/usage` (`[from, to)`, `to` the start of tomorrow; docs/PRODUCT-RULES.md "Usage").
 */
export const RANGE_DAYS = [7, 30, 90] as const;
export type RangeDays = (typeof RANGE_DAYS)[number];
export const DEFAULT_RANGE_DAYS: RangeDays = 30;

const DAY_MS = 86_400_000;
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function rangeOf(days: RangeDays, now = Date.now()): { from: string; to: string; days: string[] } {
  const today = Date.parse(utcDay(now));
  const list = Array.from({ length: days }, (_, index) => utcDay(today - (days - 1 - index) * DAY_MS));
  return { from: list[0]!, to: utcDay(today + DAY_MS), days: list };
}

/** The range a URL's `days` names, or the default. */
export function rangeDaysOf(value: string | null): RangeDays {
  const days = Number(value);
  return (RANGE_DAYS as readonly number[]).includes(days) ? (days as RangeDays) : DEFAULT_RANGE_DAYS;
}
