import { join } from "node:path";
import { describeStoreConformance } from "../conformance/store-conformance.ts";
import { openSqliteStore } from "./open.ts";
import { createTempDirectory } from "./test-fixtures.ts";

describeStoreConformance("SQLite", async ({ clock }) => {
  const directory = createTempDirectory();
  const store = await openSqliteStore({ url: `file:${join(directory.path, "conformance.db")}`, clock });
  return {
    ...store,
    async storedWebhookSecret(id) {
      const row = store.raw
        .query<{ secret: string }, [string]>("SELECT encrypted_secret AS secret FROM webhooks WHERE id = ?")
        .get(id);
      return row?.secret ?? null;
    },
    async close() {
      await store.close();
      directory.remove();
    },
  };
});
