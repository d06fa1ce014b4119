import { invalid } from "@promptrun/core";

/** A query's parameters as an object; a repeated name is a 400 (one value each). */
export function singleValuedQuery(url: URL): Map<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (values.has(name)) throw invalid(`query parameter '${name}' is given more than once`);
    values.set(name, value);
  }
  return values;
}

/** Decimal digits become a number (so the schema checks its range); anything else stays text. */
export const numberOrText = (value: string): number | string =>
  /^\d{1,15}$/.test(value) ? Number(value) : value;

/** A 400 naming every query parameter a list does not know (none: nothing happens). */
export function refuseUnknownFilters(unknown: readonly string[]): void {
  if (unknown.length === 0) return;
  const names = unknown.map((name) => `'${name}'`).join(", ");
  throw invalid(`unknown filter${unknown.length > 1 ? "s" : ""} ${names}`);
}
