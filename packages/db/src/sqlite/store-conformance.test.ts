import { join } from "node:path";
import { describeStoreConformance } from "../conformance/store-conformance.ts";
import { openSqliteStore } from "./open.ts";
import { createTempDirectory } from "./test-fixtures.ts";

describeStoreConformance(
  "SQLite",
  async ({ clock }) => {
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
      async knowledgeAtRest() {
        const count = (sql: string) => store.raw.query<{ n: number }, []>(sql).get()?.n ?? 0;
        // The FTS5 index is checked against its content table, then its own rows are counted.
        store.raw.exec("INSERT INTO kb_chunks_fts (kb_chunks_fts) VALUES ('integrity-check')");
        return {
          rows: {
            knowledge_bases: count("SELECT count(*) AS n FROM knowledge_bases"),
            kb_documents: count("SELECT count(*) AS n FROM kb_documents"),
            kb_chunks: count("SELECT count(*) AS n FROM kb_chunks"),
            kb_chunks_fts: count("SELECT count(*) AS n FROM kb_chunks_fts_docsize"),
          },
          contents: count("SELECT count(*) AS n FROM kb_documents WHERE content IS NOT NULL"),
        };
      },
      async close() {
        await store.close();
        directory.remove();
      },
    };
  },
  { workflows: true },
);
