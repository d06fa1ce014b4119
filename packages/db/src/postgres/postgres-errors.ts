import { constraintError as mapConstraintError } from "../shared/constraint-error.ts";

/** SQLSTATE codes this package reacts to. */
export const SQLSTATE = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  deadlockDetected: "40P01",
  serializationFailure: "40001",
} as const;

/** The SQLSTATE of a postgres.js error, also when drizzle wrapped it (DrizzleQueryError.cause). */
export const sqlState = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    if ("code" in current && typeof current.code === "string" && /^[0-9A-Z]{5}$/.test(current.code)) {
      return current.code;
    }
    current = current.cause;
  }
  return undefined;
};

/**
 * Turns constraint violations into PromptrunErrors (conflict for a duplicate, invalid for a
 * reference to a missing row), as the SQLite store does; other errors pass through unchanged.
 */
export const constraintError = (what: string, error: unknown): unknown => {
  const code = sqlState(error);
  const violation =
    code === SQLSTATE.uniqueViolation
      ? "unique"
      : code === SQLSTATE.foreignKeyViolation
        ? "foreign-key"
        : null;
  return mapConstraintError(what, violation, error);
};

/** Runs a write, mapping its constraint violations with constraintError. */
export const withConstraintErrors = async <T>(what: string, write: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (error) {
    throw constraintError(what, error);
  }
};
