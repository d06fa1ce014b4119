import { invalid } from "../errors.ts";

export interface ModelRef {
  provider: string;
  /** Everything after the first colon (`ollama:llama3.2:1b` → `llama3.2:1b`). */
  model: string;
}

/** Splits `provider:model`. */
export function parseModelRef(ref: string): ModelRef {
  const separator = ref.indexOf(":");
  if (separator <= 0 || separator === ref.length - 1) {
    throw invalid(`model '${ref}' must be provider:model, e.g. openai:gpt-4o-mini`);
  }
  return { provider: ref.slice(0, separator), model: ref.slice(separator + 1) };
}
