export { type CopyCounts, copyDatabase } from "./copy-database.ts";
export { type OpenStoreOptions, openStore, storeKindOf } from "./open-store.ts";
export { applyPostgresMigrations, POSTGRES_MIGRATIONS_FOLDER } from "./postgres/migrate.ts";
export { type OpenPostgresStoreOptions, openPostgresStore, type PostgresStore } from "./postgres/open.ts";
export { exportAll, importAll, type StoreSnapshot } from "./postgres/store-snapshot.ts";
export { redactDatabaseUrl } from "./redact-url.ts";
export { createRedisClusterSignals, type RedisClusterSignals } from "./redis/redis-cluster-signals.ts";
export {
  connectRedisCoordination,
  type RedisCoordination,
  type RedisCoordinationOptions,
} from "./redis/redis-coordination.ts";
export { createRedisRateLimiter, type RedisRateLimiterOptions } from "./redis/redis-rate-limiter.ts";
export {
  createRedisThreadEventBus,
  type RedisThreadEventBus,
  type RedisThreadEventBusOptions,
} from "./redis/redis-thread-event-bus.ts";
export * as postgresSchema from "./schema/postgres.ts";
export * as sqliteSchema from "./schema/sqlite.ts";
export { databasePath } from "./sqlite/database-path.ts";
export {
  type OpenSqliteStoreOptions,
  openSqliteStore,
  SQLITE_MIGRATIONS_FOLDER,
  type SqliteStore,
} from "./sqlite/open.ts";
export {
  acquireServerLock,
  type ServerLock,
  type ServerLockHolder,
  serverLockPaths,
} from "./sqlite/server-lock.ts";
