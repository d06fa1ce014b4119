import type { RestRequester } from "./rest-request.ts";

/** The client's JSON request (rest-request.ts): method, path under the base URL, the response's schema. */
export type ClientRequest = RestRequester["request"];

/** `?a=1&b=2` of the defined values (empty when none). */
export const queryString = (values: Record<string, string | number | undefined>): string => {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text ? `?${text}` : "";
};
