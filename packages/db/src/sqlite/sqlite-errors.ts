import { constraintError } from "../shared/constraint-error.ts";

const sqliteCode = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;

export const isUniqueViolation = (error: unknown): boolean => {
  const code = sqliteCode(error);
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
};

/** Another connection holds the lock past the busy timeout (SQLITE_BUSY and its extended codes). */
export const isBusy = (error: unknown): boolean => sqliteCode(error)?.startsWith("SQLITE_BUSY") === true;

/** The disk (or the database's size limit) is full; SQLite may also report it as a failed write. */
export const isStorageFull = (error: unknown): boolean => {
  const code = sqliteCode(error);
  return code === "SQLITE_FULL" || code === "SQLITE_IOERR_WRITE" || code === "SQLITE_IOERR_FSYNC";
};

export const isForeignKeyViolation = (error: unknown): boolean =>
  sqliteCode(error) === "SQLITE_CONSTRAINT_FOREIGNKEY";

/**
 * Runs a write and turns constraint violations into PromptrunErrors (conflict for a duplicate,
 * invalid for a reference to a missing row); other errors pass through unchanged.
 */
export const withConstraintErrors = <T>(what: string, write: () => T): T => {
  try {
    return write();
  } catch (error) {
    const violation = isUniqueViolation(error)
      ? "unique"
      : isForeignKeyViolation(error)
        ? "foreign-key"
        : null;
    throw constraintError(what, violation, error);
  }
};
