import { z } from "zod";

/**
 * zod's records and catch-alls skip a key named `__proto__` (assigning it would replace the
 * result's prototype) — silently, so `{"__proto__": …}` would pass unchecked and vanish. The maps
 * of the contract refuse the key instead: no rule allows it (an input name, a metadata key, an
 * env var name, a param), so a request or prompt file that holds it is a 400 naming the key.
 * The input type stays the wrapped schema's, and the OpenAPI document shows the wrapped schema.
 */
export function refusingProtoKey<T extends z.ZodType>(schema: T, message = "not allowed as a key") {
  return z.preprocess((value: z.input<T>, context) => {
    if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
      context.addIssue({ code: "custom", message, path: ["__proto__"], input: value });
    }
    return value;
  }, schema);
}
