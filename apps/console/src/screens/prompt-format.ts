/** How the prompt screens write money, tokens and times. */

// Money and counts as every other screen writes them: the same run costs the same digits everywhere.
export { formatCount, formatUsd } from "../components/figures.ts";

/** A date-time in the reader's locale, to the second. */
export const formatTime = (iso: string): string =>
  new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
