import { MESSAGES_INPUT_MAX_ENTRIES } from "@promptrun/contract";

const ROLES = new Set(["user", "assistant"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What is wrong with one entry (after `inputs.<name>[i]`), or null. */
function entryProblem(entry: unknown): string | null {
  if (!isPlainObject(entry)) return ": must be an object {role, content}";
  const extra = Object.keys(entry).filter((key) => key !== "role" && key !== "content");
  if (extra.length > 0)
    return `: unknown field${extra.length > 1 ? "s" : ""} ${extra.map((key) => `'${key}'`).join(", ")}`;
  if (typeof entry.role !== "string" || !ROLES.has(entry.role))
    return `.role: must be user or assistant${entry.role === "system" ? " (a system message belongs in the prompt)" : ""}`;
  if (typeof entry.content !== "string") return ".content: must be a string";
  return null;
}

/**
 * A `messages` input: at most MESSAGES_INPUT_MAX_ENTRIES entries, each exactly
 * `{role: "user" | "assistant", content: string}` (docs/PRODUCT-RULES.md "Prompts and versions").
 * Returns the message naming the input and entry (`inputs.history[2].role: …`), or null.
 */
export function messagesInputProblem(name: string, value: unknown): string | null {
  if (!Array.isArray(value)) return `inputs.${name} must be a list of {role, content} messages`;
  if (value.length > MESSAGES_INPUT_MAX_ENTRIES)
    return `inputs.${name} has ${value.length} messages; at most ${MESSAGES_INPUT_MAX_ENTRIES} are allowed`;
  for (const [index, entry] of value.entries()) {
    const problem = entryProblem(entry);
    if (problem) return `inputs.${name}[${index}]${problem}`;
  }
  return null;
}
