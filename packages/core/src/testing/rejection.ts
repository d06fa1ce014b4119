import { PromptrunError } from "../errors.ts";

/**
 * Awaits a promise that must reject with a PromptrunError, and returns that error. Takes what a
 * port that may answer synchronously returns too (`void | Promise<void>`).
 */
export async function rejection(promise: unknown): Promise<PromptrunError> {
  try {
    await promise;
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PromptrunError, but the promise resolved");
}
