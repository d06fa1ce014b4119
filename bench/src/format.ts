/** Number formatting for the report: fixed, readable, "n/a" for what was not measured. */
const isMissing = (value: number) => !Number.isFinite(value);

export const formatMs = (value: number): string =>
  isMissing(value)
    ? "n/a"
    : value >= 100
      ? value.toFixed(0)
      : value >= 10
        ? value.toFixed(1)
        : value.toFixed(2);

export const formatCount = (value: number): string =>
  isMissing(value) ? "n/a" : Math.round(value).toLocaleString("en-US");

export const formatPercent = (ratio: number): string =>
  isMissing(ratio) ? "n/a" : `${(ratio * 100).toFixed(1)} %`;

export const formatCores = (value: number): string => (isMissing(value) ? "n/a" : value.toFixed(2));

/** Signed milliseconds, e.g. "+1.23" / "−0.40". */
export const formatAddedMs = (value: number): string =>
  isMissing(value) ? "n/a" : `${value >= 0 ? "+" : "−"}${formatMs(Math.abs(value))}`;

export const formatKb = (value: number): string => (isMissing(value) ? "n/a" : `${value.toFixed(1)} KB`);
