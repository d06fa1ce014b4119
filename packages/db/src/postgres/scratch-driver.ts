import { SQL } from "bun";
import postgres from "postgres";
import { drizzle as drizzleBun } from "drizzle-orm/bun-sql";
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { pgTable, text, jsonb, bigint, integer } from "drizzle-orm/pg-core";
import { eq, sql } from "drizzle-orm";

const url = "postgres://postgres@127.0.0.1:5432/test";
const t = pgTable("scratch_t", { id: text("id").primaryKey(), doc: jsonb("doc").$type<Record<string, unknown>>(), at: bigint("at", { mode: "number" }), n: integer("n") });

const run = async (name: string, db: any, close: () => Promise<void>) => {
  console.log("=== ", name);
  try {
    await db.execute(sql`drop table if exists scratch_t`);
    await db.execute(sql`create table scratch_t (id text primary key, doc jsonb, at bigint, n integer)`);
    await db.insert(t).values({ id: "a", doc: { x: 1, s: "str", arr: [1, 2] }, at: 1700000000000, n: 1 });
    const row = await db.select().from(t).where(eq(t.id, "a"));
    console.log("jsonb roundtrip", JSON.stringify(row), typeof row[0].doc);
    const raw = await db.execute(sql`select jsonb_typeof(doc) as ty, doc->>'s' as s from scratch_t`);
    console.log("jsonb stored as", JSON.stringify(raw));
    // transaction atomicity with throw after await
    try {
      await db.transaction(async (tx: any) => {
        await tx.insert(t).values({ id: "b", doc: {}, at: 1, n: 1 });
        await new Promise((r) => setTimeout(r, 10));
        throw new Error("boom");
      });
    } catch (e) { console.log("tx threw", (e as Error).message); }
    console.log("b exists after rollback?", (await db.select().from(t).where(eq(t.id, "b"))).length);
    // unique violation code
    try { await db.insert(t).values({ id: "a", doc: {}, at: 1, n: 1 }); } catch (e: any) {
      console.log("dup error", e.constructor.name, e.code, e.errno, e.cause?.code, Object.keys(e), e.cause && Object.keys(e.cause));
    }
    // concurrent transactions
    const started = performance.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => db.transaction(async (tx: any) => {
      await tx.insert(t).values({ id: `c${i}`, doc: { i }, at: i, n: i });
      await tx.update(t).set({ n: sql`${t.n} + 1` }).where(eq(t.id, `c${i}`));
    })));
    console.log("200 concurrent tx ms", Math.round(performance.now() - started));
    const cnt = await db.execute(sql`select count(*)::int as c, sum(n)::int as s from scratch_t where id like 'c%'`);
    console.log("count", JSON.stringify(cnt));
    // savepoint nested tx
    await db.transaction(async (tx: any) => {
      try { await tx.transaction(async (sp: any) => { await sp.insert(t).values({ id: "a", doc: {}, at: 1, n: 1 }); }); } catch (e: any) { console.log("nested failed ok", e.cause?.code ?? e.code); }
      await tx.insert(t).values({ id: "d", doc: { nested: true }, at: 1, n: 1 });
    });
    console.log("d after savepoint", (await db.select().from(t).where(eq(t.id, "d"))).length);
    // returning multi-row with on conflict do nothing
    const ret = await db.insert(t).values([{ id: "a", doc: {}, at: 1, n: 1 }, { id: "e", doc: {}, at: 1, n: 1 }]).onConflictDoNothing().returning({ id: t.id });
    console.log("on conflict returning", JSON.stringify(ret));
    // jsonb of a string
    await db.insert(t).values({ id: "f", doc: ["a", "b"] as any, at: 2, n: 1 });
    console.log("array jsonb", JSON.stringify(await db.select().from(t).where(eq(t.id, "f"))));
  } catch (e) { console.log("FAILED", e); }
  await close();
};

const client = postgres(url, { max: 10, onnotice: () => {} });
await run("postgres-js", drizzlePg({ client }), () => client.end());
const bun = new SQL(url, { max: 10 });
await run("bun-sql", drizzleBun({ client: bun }), () => bun.close());
