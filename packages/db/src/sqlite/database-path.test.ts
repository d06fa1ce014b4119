import { describe, expect, test } from "bun:test";
import { PromptrunError } from "@promptrun/core";
import { databasePath, MEMORY_PATH } from "./database-path.ts";

describe("databasePath", () => {
  test("resolves file: URLs relative to the working directory", () => {
    expect(databasePath("file:./data/x.db", "/srv/app")).toBe("/srv/app/data/x.db");
    expect(databasePath("file:data/x.db", "/srv/app")).toBe("/srv/app/data/x.db");
  });

  test("keeps absolute paths and file:// URLs", () => {
    expect(databasePath("file:/var/lib/promptrun.db", "/srv/app")).toBe("/var/lib/promptrun.db");
    expect(databasePath("file:///var/lib/promptrun.db", "/srv/app")).toBe("/var/lib/promptrun.db");
    expect(databasePath("/var/lib/promptrun.db", "/srv/app")).toBe("/var/lib/promptrun.db");
  });

  test("recognises in-memory databases", () => {
    expect(databasePath(":memory:")).toBe(MEMORY_PATH);
    expect(databasePath("file::memory:")).toBe(MEMORY_PATH);
  });

  test("refuses other schemes and empty paths", () => {
    expect(() => databasePath("postgres://localhost/promptrun")).toThrow(PromptrunError);
    expect(() => databasePath("file:")).toThrow("empty SQLite database path");
  });
});
