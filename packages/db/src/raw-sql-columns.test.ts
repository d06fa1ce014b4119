/**
 * The stores' hand-written SQL (SQLite prepared statements, Postgres batch inserts) names its
 * columns in text that drizzle does not check. This test reads those statements out of the
 * sources and compares them with the drizzle schemas: a renamed or added column fails here
 * rather than at run time.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableColumns, getTableName, is, Table } from "drizzle-orm";
import * as postgresSchema from "./schema/postgres.ts";
import * as sqliteSchema from "./schema/sqlite.ts";

interface TableShape {
  columns: Set<string>;
  /** Columns an INSERT must name: NOT NULL without a default. */
  required: Set<string>;
}

const tablesOf = (schema: Record<string, unknown>): Map<string, TableShape> => {
  const tables = new Map<string, TableShape>();
  for (const value of Object.values(schema)) {
    if (!is(value, Table)) continue;
    const columns = Object.values(getTableColumns(value));
    tables.set(getTableName(value), {
      columns: new Set(columns.map((column) => column.name)),
      required: new Set(
        columns.filter((column) => column.notNull && !column.hasDefault).map((column) => column.name),
      ),
    });
  }
  return tables;
};

/** The string and template literals of a file's source, `${…}` parts blanked. */
const sqlTextsOf = (file: string): string[] => {
  const source = readFileSync(file, "utf8");
  const texts: string[] = [];
  for (const match of source.matchAll(/`([^`]*)`|"((?:[^"\\]|\\.)*)"/g)) {
    const text = (match[1] ?? match[2] ?? "").replace(/\$\{[^}]*\}/g, " ? ");
    if (/\b(INSERT INTO|UPDATE|SELECT)\b/.test(text)) texts.push(text.replace(/\s+/g, " "));
  }
  return texts;
};

interface ColumnUse {
  table: string;
  column: string;
  statement: string;
}

/** Column names an INSERT, UPDATE … SET or SELECT statement uses, with their table. */
export const columnsUsed = (statement: string, tables: Map<string, TableShape>): ColumnUse[] => {
  const uses: ColumnUse[] = [];
  const use = (table: string, column: string) => uses.push({ table, column, statement });
  for (const [, table, list] of statement.matchAll(/INSERT INTO (\w+) \(([^)]*)\)/g)) {
    for (const column of (list ?? "").split(",")) use(table ?? "", column.trim());
  }
  for (const [, table, assignments] of statement.matchAll(/UPDATE (\w+) SET (.*?)(?: WHERE |$)/g)) {
    for (const [, column] of (assignments ?? "").matchAll(/(?:^|, )(\w+) = /g))
      use(table ?? "", column ?? "");
  }
  // SELECT lists: `alias.column` against FROM/JOIN aliases, bare names against a lone FROM table.
  const aliases = new Map<string, string>();
  for (const [, table, alias] of statement.matchAll(/(?:FROM|JOIN) (\w+)(?: AS)?(?: (\w+))?/g)) {
    if (table && tables.has(table))
      aliases.set(alias && !/^(WHERE|JOIN|ON|ORDER|USING)$/i.test(alias) ? alias : table, table);
  }
  for (const [, list] of statement.matchAll(/SELECT (.*?) FROM /g)) {
    for (const item of (list ?? "").split(",")) {
      const expression = item.trim().replace(/ AS \w+$/, "");
      const qualified = /^(\w+)\.(\w+)$/.exec(expression);
      if (qualified) {
        const table = aliases.get(qualified[1] ?? "");
        if (table) use(table, qualified[2] ?? "");
      } else if (/^\w+$/.test(expression) && aliases.size === 1) {
        use([...aliases.values()][0] ?? "", expression);
      }
    }
  }
  return uses.filter((found) => tables.has(found.table));
};

const sourcesIn = (folder: string): string[] =>
  readdirSync(join(import.meta.dir, folder))
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.startsWith("test-"))
    .map((name) => join(import.meta.dir, folder, name));

describe.each([
  ["SQLite", "sqlite", tablesOf(sqliteSchema)],
  ["Postgres", "postgres", tablesOf(postgresSchema)],
])("%s hand-written SQL", (_name, folder, tables) => {
  const statements = sourcesIn(folder).flatMap(sqlTextsOf);

  test("names only columns of the drizzle schema", () => {
    const uses = statements.flatMap((statement) => columnsUsed(statement, tables));
    expect(uses.length).toBeGreaterThan(10);
    const unknown = uses.filter(({ table, column }) => !tables.get(table)?.columns.has(column));
    expect(unknown).toEqual([]);
  });

  test("INSERTs name every NOT NULL column without a default", () => {
    const missing: { table: string; column: string }[] = [];
    for (const statement of statements) {
      for (const [, table, list] of statement.matchAll(/INSERT INTO (\w+) \(([^)]*)\)/g)) {
        const named = new Set((list ?? "").split(",").map((column) => column.trim()));
        for (const column of tables.get(table ?? "")?.required ?? []) {
          if (!named.has(column)) missing.push({ table: table ?? "", column });
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

test("the parser reads INSERT, UPDATE and aliased SELECT column lists", () => {
  const tables = tablesOf(sqliteSchema);
  const statement =
    "SELECT k.id, k.no_such AS x, t.name FROM api_keys k JOIN tenants t ON t.id = k.tenant_id; " +
    "UPDATE runs SET status = 'failed', bogus = ? WHERE id = ?; INSERT INTO threads (tenant_id, nope) VALUES (?, ?)";
  expect(columnsUsed(statement, tables).map(({ table, column }) => `${table}.${column}`)).toEqual([
    "threads.tenant_id",
    "threads.nope",
    "runs.status",
    "runs.bogus",
    "api_keys.id",
    "api_keys.no_such",
    "tenants.name",
  ]);
});
