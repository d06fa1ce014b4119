const usd = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumSignificantDigits: 3,
});

/** `$0.0000240` style: tiny per-answer costs keep three significant digits. */
export function formatCost(dollars: number): string {
  if (dollars === 0) return "$0";
  return dollars >= 0.01 ? `$${dollars.toFixed(4)}` : usd.format(dollars);
}

/** `1 token` / `12 tokens`. */
export const formatTokens = (count: number): string =>
  `${count.toLocaleString("en-US")} token${count === 1 ? "" : "s"}`;
