import { describeStoreConformance } from "../conformance/store-conformance.ts";
import { describeOnPostgres } from "./describe-on-postgres.ts";
import { openPostgresStore } from "./open.ts";

await describeOnPostgres("Postgres", (database) => {
  describeStoreConformance(
    "Postgres",
    async ({ clock }) => {
      // Each test starts empty; opening also runs the (already applied) migrations check.
      await database().truncate();
      const store = await openPostgresStore({ url: database().url, clock, maxConnections: 4 });
      return {
        ...store,
        async storedWebhookSecret(id) {
          const [row] = await store.client<{ secret: string }[]>`
          select encrypted_secret as secret from webhooks where id = ${id}`;
          return row?.secret ?? null;
        },
        async knowledgeAtRest() {
          const [row] = await store.client<
            { bases: number; documents: number; chunks: number; indexed: number; contents: number }[]
          >`
          select (select count(*)::int from knowledge_bases) as bases,
                 (select count(*)::int from kb_documents) as documents,
                 (select count(*)::int from kb_chunks) as chunks,
                 (select count(*)::int from kb_chunks where search_vector is not null) as indexed,
                 (select count(*)::int from kb_documents where content is not null) as contents`;
          return {
            rows: {
              knowledge_bases: row?.bases ?? 0,
              kb_documents: row?.documents ?? 0,
              kb_chunks: row?.chunks ?? 0,
              kb_chunks_indexed: row?.indexed ?? 0,
            },
            contents: row?.contents ?? 0,
          };
        },
      };
    },
    { workflows: true },
  );
});
