import { afterAll, beforeAll, describe } from "bun:test";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

/**
 * A describe block over a fresh Postgres database, created before its tests and dropped after
 * them; skipped (with its name shown) when no Postgres is reachable. `database()` is valid inside
 * the tests and hooks of `body`.
 */
export async function describeOnPostgres(
  name: string,
  body: (database: () => TestDatabase) => void,
): Promise<void> {
  const available = await checkPostgres();
  describe.skipIf(!available)(name, () => {
    let database: TestDatabase | undefined;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(() => database?.drop());
    body(() => {
      if (!database) throw new Error("the test database exists only inside the tests");
      return database;
    });
  });
}
