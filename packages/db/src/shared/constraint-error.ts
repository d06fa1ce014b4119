import { PromptrunError } from "@promptrun/core";

/** The kind of constraint a dialect's error reports, as far as the stores care. */
export type ConstraintViolation = "unique" | "foreign-key" | null;

/**
 * Turns a constraint violation into a PromptrunError (conflict for a duplicate, invalid for a
 * reference to a missing row); any other error is returned unchanged. Each dialect classifies
 * its own error codes; the mapping to product errors is the same for both.
 */
export const constraintError = (what: string, violation: ConstraintViolation, error: unknown): unknown => {
  if (violation === "unique") {
    return new PromptrunError("conflict", `${what} already exists`, { cause: error });
  }
  if (violation === "foreign-key") {
    return new PromptrunError("invalid", `${what} refers to a missing row`, { cause: error });
  }
  return error;
};
