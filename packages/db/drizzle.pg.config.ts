import { defineConfig } from "drizzle-kit";

// `generate` only: migrations are applied at open by drizzle-orm/postgres-js/migrator.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema/postgres.ts",
  out: "./drizzle-pg",
});
