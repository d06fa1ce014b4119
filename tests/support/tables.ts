/**
 * Every table of a server's database, as quoted names ready for `select * from …`: SQLite's
 * tables from sqlite_master, Postgres' base tables in every non-system schema (the public one and
 * drizzle's migration journal), for scans that must not miss a table added later.
 */
import type { TestServer } from "./server.ts";

export async function listTables(server: Pick<TestServer, "dialect" | "sql">): Promise<string[]> {
  if (server.dialect === "sqlite") {
    const rows = await server.sql<{ name: string }>("select name from sqlite_master where type = 'table'");
    return rows.map((row) => `"${row.name}"`);
  }
  const rows = await server.sql<{ table_schema: string; table_name: string }>(
    `select table_schema, table_name from information_schema.tables
     where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  return rows.map((row) => `"${row.table_schema}"."${row.table_name}"`);
}

/** The tables (of `listTables`) whose rows, as JSON, contain `text`. */
export async function tablesContaining(
  server: Pick<TestServer, "dialect" | "sql">,
  text: string,
): Promise<string[]> {
  const found: string[] = [];
  for (const table of await listTables(server)) {
    const rows = await server.sql(`select * from ${table}`);
    if (JSON.stringify(rows).includes(text)) found.push(table);
  }
  return found;
}
