/**
 * The dialect-specific column kinds, in one place: a Postgres schema mirrors these helpers
 * (timestamptz / jsonb / boolean) and keeps the table definitions otherwise identical.
 */
import { integer, real, text } from "drizzle-orm/sqlite-core";

/** UUID text id. */
export const uuid = (name: string) => text(name);

/** Epoch milliseconds in an INTEGER column, read back as a Date. */
export const epochMs = (name: string) => integer(name, { mode: "timestamp_ms" });

/** JSON document stored as TEXT, parsed on read. */
export const jsonText = <T>(name: string) => text(name, { mode: "json" }).$type<T>();

/** 0/1 INTEGER read back as a boolean. */
export const flag = (name: string) => integer(name, { mode: "boolean" });

/** Whole numbers (counters, version numbers). */
export const count = (name: string) => integer(name, { mode: "number" });

/** Fractional numbers (latencies). */
export const decimal = (name: string) => real(name);
