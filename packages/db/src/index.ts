export * as sqliteSchema from "./schema/sqlite.ts";
export { databasePath } from "./sqlite/database-path.ts";
export {
  type OpenSqliteStoreOptions,
  openSqliteStore,
  SQLITE_MIGRATIONS_FOLDER,
  type SqliteStore,
} from "./sqlite/open.ts";
