import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { addTenant, at } from "@promptrun/core/testing";
import { chunksOf, knowledgeBase, newDocument } from "../conformance/knowledge-fixtures.ts";
import { openPostgresStore, type PostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

// The dialect-neutral behaviour is in src/conformance/knowledge-conformance.ts; what stays here is
// Postgres's own: several instances (pools) on one database, and the lock order.

const available = await checkPostgres();

describe.skipIf(!available)("Postgres KnowledgeStore", () => {
  let database: TestDatabase;
  const opened: PostgresStore[] = [];
  const open = async () => {
    const store = await openPostgresStore({ url: database.url, maxConnections: 6 });
    opened.push(store);
    return store;
  };
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await database.truncate();
  });
  afterAll(() => database?.drop());

  test("instances claiming at once each get different documents (SKIP LOCKED)", async () => {
    const [first, second] = [await open(), await open()];
    const tenant = await addTenant(first);
    const base = knowledgeBase(tenant.id, "docs");
    await first.knowledge.createKnowledgeBase(base);
    const added = Array.from({ length: 20 }, (_, n) => newDocument(base, { createdAt: at(n) }));
    for (const document of added) await first.knowledge.addDocument(document);
    const claims = await Promise.all(
      Array.from({ length: 24 }, (_, n) =>
        (n % 2 === 0 ? first : second).knowledge.claimDocument(`instance-${n}`, at(100), at(50)),
      ),
    );
    const ids = claims.flatMap((claim) => (claim ? [claim.document.id] : []));
    expect(ids.toSorted()).toEqual(added.map((document) => document.id).toSorted());
  });

  test("completions, replacements and deletes of one knowledge base at once never deadlock", async () => {
    const [first, second] = [await open(), await open()];
    const tenant = await addTenant(first);
    const base = knowledgeBase(tenant.id, "docs");
    await first.knowledge.createKnowledgeBase(base);
    const added = Array.from({ length: 10 }, (_, n) =>
      newDocument(base, { createdAt: at(n), externalId: `doc-${n % 5}` }),
    );
    // Five documents survive the replacements; claim them all, then end them while others write.
    for (const document of added) await first.knowledge.addDocument(document);
    const claimed = [];
    for (;;) {
      const claim = await first.knowledge.claimDocument("worker", at(100), at(50));
      if (!claim) break;
      claimed.push(claim.document.id);
    }
    expect(claimed).toHaveLength(5);
    const writes = [
      ...claimed.map((id, n) =>
        (n % 2 === 0 ? first : second).knowledge.completeDocument(id, "worker", {
          chunks: chunksOf(Array.from({ length: 300 }, (_, k) => `chunk ${k} of ${id}`)).map((chunk) => ({
            ...chunk,
            documentId: id,
          })),
          tokens: 1,
          cost: { total: 0, priced: true },
          readyAt: at(60),
          outbox: () => [],
        }),
      ),
      second.knowledge.addDocument(newDocument(base, { createdAt: at(70), externalId: "doc-0" })),
      first.knowledge.deleteDocument(tenant.id, base.id, claimed[1]!),
      second.knowledge.deleteKnowledgeBase(tenant.id, "docs"),
    ];
    const results = await Promise.allSettled(writes);
    const failures = results.filter((result) => result.status === "rejected");
    // A write racing the knowledge base's delete may find it gone (a missing reference), never a deadlock.
    for (const failure of failures)
      expect(String((failure as PromiseRejectedResult).reason)).not.toContain("deadlock");
    const [rows] = await first.client<{ n: number }[]>`
      select (select count(*) from knowledge_bases)::int + (select count(*) from kb_documents)::int
           + (select count(*) from kb_chunks)::int as n`;
    expect(rows?.n).toBe(0);
  });
});
