/**
 * Runs one engine scenario on each real store: a temporary SQLite file, and a fresh Postgres
 * database when one is reachable (skipped with a clear name otherwise).
 */
import { test } from "bun:test";
import type { Store } from "@promptrun/core";
import { describeOnPostgres } from "./postgres/describe-on-postgres.ts";
import { openPostgresStore } from "./postgres/open.ts";
import { openTempStore } from "./sqlite/test-fixtures.ts";

export async function testOnEachStore(
  name: string,
  scenario: (store: Store) => Promise<void>,
  timeoutMs: number,
) {
  test(
    `SQLite: ${name}`,
    async () => {
      const { store, dispose } = await openTempStore();
      try {
        await scenario(store);
      } finally {
        await dispose();
      }
    },
    timeoutMs,
  );

  await describeOnPostgres("Postgres", (database) => {
    test(
      name,
      async () => {
        const store = await openPostgresStore({ url: database().url, maxConnections: 4 });
        try {
          await scenario(store);
        } finally {
          await store.close();
        }
      },
      timeoutMs,
    );
  });
}
