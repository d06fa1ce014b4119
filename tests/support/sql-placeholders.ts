/**
 * Turns SQLite-style `?` placeholders into Postgres' `$1, $2, …`, leaving any `?` inside a quoted
 * string or identifier alone, so a test writes one query text for both dialects.
 */
export function toPostgresPlaceholders(query: string): string {
  let result = "";
  let quote: string | null = null;
  let index = 0;
  for (const character of query) {
    if (quote !== null) {
      // A doubled quote inside a literal toggles out and back in again: the same outcome.
      if (character === quote) quote = null;
    } else if (character === "'" || character === '"') {
      quote = character;
    } else if (character === "?") {
      index += 1;
      result += `$${index}`;
      continue;
    }
    result += character;
  }
  return result;
}
