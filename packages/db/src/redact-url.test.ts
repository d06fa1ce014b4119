import { expect, test } from "bun:test";
import { redactDatabaseUrl, redactUrl } from "./redact-url.ts";

test("redactUrl hides a password and keeps the rest; an unparseable URL becomes the fallback", () => {
  expect(redactUrl("redis://user:s3cret@cache:6379/0")).toBe("redis://user:***@cache:6379/0");
  expect(redactUrl("redis://cache:6379")).toBe("redis://cache:6379");
  expect(redactUrl("not a url")).toBe("<unparseable URL>");
  expect(redactUrl("not a url", "postgres://…")).toBe("postgres://…");
});

test("redactDatabaseUrl: a Postgres URL loses its password, a SQLite location stays as it is", () => {
  expect(redactDatabaseUrl("postgres://app:s3cret@db:5432/promptrun")).toBe(
    "postgres://app:***@db:5432/promptrun",
  );
  expect(redactDatabaseUrl("file:./data/promptrun.db")).toBe("file:./data/promptrun.db");
});
