import { formatValidationError, invalid } from "@promptrun/core";
import type { z } from "zod";

/**
 * The query string of a list route checked against its schema: each name at most once, unknown
 * names refused, and every failure a 400 naming the parameter (e.g. `limit`).
 */
export function parseQuery<Schema extends z.ZodType>(request: Request, schema: Schema): z.infer<Schema> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URL(request.url).searchParams) {
    if (Object.hasOwn(values, name)) throw invalid(`query parameter '${name}' is given more than once`);
    values[name] = value;
  }
  const result = schema.safeParse(values);
  if (!result.success) throw invalid(formatValidationError(result.error, "query"));
  return result.data;
}
