import { defineConfig } from "drizzle-kit";

// `generate` only: migrations are applied at open by drizzle-orm/bun-sqlite/migrator.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/schema/sqlite.ts",
  out: "./drizzle",
});
