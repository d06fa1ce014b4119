import { expect, test } from "bun:test";
import { toPostgresPlaceholders } from "./sql-placeholders.ts";

test("numbers each placeholder in order", () => {
  expect(toPostgresPlaceholders("select * from runs where tenant_id = ? and output like ?")).toBe(
    "select * from runs where tenant_id = $1 and output like $2",
  );
});

test("leaves question marks inside string literals and quoted identifiers", () => {
  expect(toPostgresPlaceholders(`select '?', 'it''s ?', "odd?" from t where a = ?`)).toBe(
    `select '?', 'it''s ?', "odd?" from t where a = $1`,
  );
});

test("a query without placeholders is unchanged", () => {
  expect(toPostgresPlaceholders("select count(*) as n from runs")).toBe("select count(*) as n from runs");
});
