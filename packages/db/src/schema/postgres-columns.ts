/**
 * The Postgres column kinds, in one place, mirroring ./sqlite-columns.ts so the two schemas keep
 * identical table definitions. Choices, and why:
 * - Text is `COLLATE "C"`: ordering and `<`/`>` cursors compare bytes, as SQLite does, whatever
 *   the database's default collation (en_US would ignore hyphens in UUIDs and fold case in slugs).
 * - Ids are that text, not the `uuid` type: a malformed id finds nothing instead of raising.
 * - Timestamps are `timestamptz(3)`: readable in psql, and millisecond-exact like the SQLite
 *   epoch ms, so page cursors built from `getTime()` compare equal.
 * - JSON is `json`, not `jsonb`: jsonb reorders object keys, and the order of a prompt's declared
 *   inputs (validation messages) or of a run's metadata must come back as it was written.
 */
import { boolean, customType, doublePrecision, integer, json, timestamp } from "drizzle-orm/pg-core";

/** Text compared byte by byte (the "C" collation), as SQLite compares it. */
export const text = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
});

/** UUID text id. */
export const uuid = (name: string) => text(name);

/** timestamptz with millisecond precision, read back as a Date. */
export const epochMs = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });

/** JSON document stored as written (key order kept), parsed on read. */
export const jsonText = <T>(name: string) => json(name).$type<T>();

/** Native boolean. */
export const flag = (name: string) => boolean(name);

/** Whole numbers (counters, version numbers). */
export const count = (name: string) => integer(name);

/** Fractional numbers (latencies). */
export const decimal = (name: string) => doublePrecision(name);

/** Bytes (uploads, little-endian float32 vectors), read back as a Buffer. */
export const bytes = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/** A full-text search vector (generated from a text column). */
export const tsvector = customType<{ data: string; driverData: string }>({ dataType: () => "tsvector" });
