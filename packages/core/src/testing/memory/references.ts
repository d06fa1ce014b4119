import { conflict, invalid } from "../../errors.ts";

/**
 * What the SQL stores' foreign keys check, for the memory store's separate parts: whether a
 * referenced row exists. The memory store wires each part to the others.
 */
export interface MemoryReferences {
  tenant(id: string): boolean;
  promptVersion(id: string): boolean;
  promptModel(versionId: string): string | null;
  environment(id: string): boolean;
  run(id: string): boolean;
}

/** A reference to a missing row is invalid input (the SQL stores' foreign-key violation). */
export const requireReference = (exists: boolean, what: string): void => {
  if (!exists) throw invalid(`${what} refers to a missing row`);
};

/** A second row with the same key is a conflict (the SQL stores' unique violation). */
export const duplicate = (what: string) => conflict(`${what} already exists`);
