import { envVarsSchema } from "@promptrun/contract";
import { invalid } from "../errors.ts";

/**
 * Checks env vars against the contract's rules (UPPER_CASE keys, string values, ≤ 50 entries,
 * ≤ 65,536 UTF-8 bytes of keys + values) and returns them typed; throws invalid naming the rule.
 */
export function assertEnvVarLimits(values: unknown, subject: string): Record<string, string> {
  const parsed = envVarsSchema.safeParse(values);
  if (parsed.success) return parsed.data;
  const messages = parsed.error.issues.map((issue) => issue.message.replace(/^envVars\b/, subject));
  throw invalid([...new Set(messages)].join("; "));
}
