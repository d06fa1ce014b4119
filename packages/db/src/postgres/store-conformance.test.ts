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
    const store = await openPostgresStore({ url: database.url, clock, maxConnections: 4 });
    return {
      ...store,
      async storedWebhookSecret(id) {
        const [row] = await store.client<{ secret: string }[]>`
          select encrypted_secret as secret from webhooks where id = ${id}`;
        return row?.secret ?? null;
      },
    };
  });
});
