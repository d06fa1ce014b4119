import { afterAll, beforeAll, describe } from "bun:test";
import { describeStoreConformance } from "../conformance/store-conformance.ts";
import { openPostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

const available = await checkPostgres();

describe.skipIf(!available)("Postgres", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  describeStoreConformance("Postgres", async ({ clock }) => {
    // Each test starts empty; opening also runs the (already applied) migrations check.
    await database.truncate();
    return openPostgresStore({ url: database.url, clock, maxConnections: 4 });
  });
});
