import { z } from "zod";
import { uuidSchema } from "./ids.ts";

/**
 * POST /console/session: the web console's sign-in, an API key exchanged for a session cookie
 * (docs/console.md "Serving and sign-in"). A key of the wrong shape is a 401 like an unknown one,
 * so the schema takes any string.
 */
export const consoleSignInRequestSchema = z.strictObject({
  apiKey: z.string().max(1024),
});
export type ConsoleSignInRequest = z.infer<typeof consoleSignInRequestSchema>;

/** The answer of a sign-in: whose console it is (the session itself travels in the cookie only). */
export const consoleSessionSchema = z.object({
  tenant: z.object({ id: uuidSchema, name: z.string() }),
});
export type ConsoleSession = z.infer<typeof consoleSessionSchema>;
