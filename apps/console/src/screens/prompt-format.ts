/** How the prompt screens write money, tokens and times. */

/** US dollars: cents for large sums, up to six decimals for the small sums of single runs. */
export function formatUsd(amount: number): string {
  if (amount === 0) return "$0";
  if (Math.abs(amount) >= 1) return `$${amount.toFixed(2)}`;
  return `$${amount.toFixed(6).replace(/0+$/, "").replace(/\.$/, "")}`;
}

export const formatCount = (count: number): string => count.toLocaleString("en-US");

/** A date-time in the reader's locale, to the second. */
export const formatTime = (iso: string): string =>
  new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
