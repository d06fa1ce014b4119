import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { addTenant, at } from "@promptrun/core/testing";
import { addReady, knowledgeBase, newDocument } from "../conformance/knowledge-fixtures.ts";
import { openSqliteStore, type SqliteStore } from "./open.ts";
import { createTempDirectory, type TempDirectory } from "./test-fixtures.ts";

// The dialect-neutral behaviour is in src/conformance/knowledge-conformance.ts; what stays here is
// SQLite's own: several connections on one file, and the FTS5 index across VACUUM.

let directory: TempDirectory | null = null;
const opened: SqliteStore[] = [];
const open = async () => {
  directory ??= createTempDirectory();
  const store = await openSqliteStore({ url: `file:${join(directory.path, "kb.db")}` });
  opened.push(store);
  return store;
};
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  directory?.remove();
  directory = null;
});

const ftsIntact = (store: SqliteStore) =>
  store.raw.exec("INSERT INTO kb_chunks_fts (kb_chunks_fts) VALUES ('integrity-check')");

test("processes claiming from one file at once never claim the same document", async () => {
  const store = await open();
  const tenant = await addTenant(store);
  const base = knowledgeBase(tenant.id, "docs");
  await store.knowledge.createKnowledgeBase(base);
  const added = Array.from({ length: 60 }, (_, n) => newDocument(base, { createdAt: at(n) }));
  for (const document of added) await store.knowledge.addDocument(document);
  const claimer = join(import.meta.dir, "test-knowledge-claimer.ts");
  const children = [1, 2, 3].map((n) =>
    Bun.spawn(["bun", claimer, join(directory!.path, "kb.db"), `instance-${n}`], { stdout: "pipe" }),
  );
  const outputs = await Promise.all(children.map((child) => new Response(child.stdout).text()));
  expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0, 0]);
  const ids = outputs.flatMap((output) => output.split("\n").filter(Boolean));
  expect(ids.toSorted()).toEqual(added.map((document) => document.id).toSorted());
  // Three Bun processes start and open the file: seconds on a loaded machine, not bun's 5 s default.
}, 60_000);

test("the keyword index stays in step with the chunks across deletes and VACUUM", async () => {
  const store = await open();
  const tenant = await addTenant(store);
  const base = knowledgeBase(tenant.id, "docs");
  await store.knowledge.createKnowledgeBase(base);
  const gone = await addReady(store, base, ["puffin colony", "puffin beak"]);
  const kept = await addReady(store, base, ["gannet dive", "gannet puffin"], { createdAt: at(2) });
  await store.knowledge.deleteDocument(tenant.id, base.id, gone.document.id);
  store.raw.exec("VACUUM");
  ftsIntact(store);
  const hits = await store.knowledge.keywordSearch(base.id, "puffin gannet", 10);
  expect(hits.map((hit) => hit.chunkId).toSorted()).toEqual(kept.chunks.map((chunk) => chunk.id).toSorted());
  expect(await store.knowledge.getChunks(base.id, [hits[0]!.chunkId])).toHaveLength(1);
});

test("runs' retrieval and citations are NOT NULL with the default [] (a create never names them)", async () => {
  const store = await open();
  const columns = store.raw
    .query<{ name: string; dflt_value: string | null; notnull: number }, []>("PRAGMA table_info(runs)")
    .all()
    .filter((column) => column.name === "retrieval" || column.name === "citations");
  expect(columns).toEqual(
    [
      { name: "retrieval", dflt_value: "'[]'", notnull: 1 },
      { name: "citations", dflt_value: "'[]'", notnull: 1 },
    ].map((column) => expect.objectContaining(column)),
  );
});
