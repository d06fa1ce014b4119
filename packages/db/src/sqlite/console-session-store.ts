import type { ConsoleSessionStore } from "@promptrun/core";
import { and, desc, eq, inArray, isNotNull, lt, lte, notInArray, or, sql } from "drizzle-orm";
import { apiKeys, consoleSessions, tenants } from "../schema/sqlite.ts";
import type { SqliteContext } from "./sqlite-context.ts";
import { withConstraintErrors } from "./sqlite-errors.ts";

/**
 * Console sessions (docs/console.md "Serving and sign-in"). The lookup runs on every console
 * request: one prepared statement joining the key and the tenant, never cached, so a key revoked
 * by any connection (the CLI included) ends its sessions at the next request.
 */
export const createConsoleSessionStore = ({ db }: SqliteContext): ConsoleSessionStore => {
  const selectSession = db
    .select({ session: consoleSessions, tenant: tenants, key: apiKeys })
    .from(consoleSessions)
    .innerJoin(apiKeys, eq(apiKeys.id, consoleSessions.apiKeyId))
    .innerJoin(tenants, eq(tenants.id, consoleSessions.tenantId))
    .where(eq(consoleSessions.tokenHash, sql.placeholder("hash")))
    .prepare();

  return {
    async create(session, { maxPerKey }) {
      withConstraintErrors("console session", () =>
        db.transaction(
          (tx) => {
            tx.insert(consoleSessions).values(session).run();
            const newest = tx
              .select({ tokenHash: consoleSessions.tokenHash })
              .from(consoleSessions)
              .where(eq(consoleSessions.apiKeyId, session.apiKeyId))
              .orderBy(desc(consoleSessions.createdAt), desc(consoleSessions.tokenHash))
              .limit(maxPerKey);
            tx.delete(consoleSessions)
              .where(
                and(
                  eq(consoleSessions.apiKeyId, session.apiKeyId),
                  notInArray(consoleSessions.tokenHash, newest),
                ),
              )
              .run();
          },
          { behavior: "immediate" },
        ),
      );
    },

    async find(tokenHash) {
      return selectSession.get({ hash: tokenHash }) ?? null;
    },

    async touch(tokenHash, at) {
      db.update(consoleSessions)
        .set({ lastSeenAt: at })
        .where(and(eq(consoleSessions.tokenHash, tokenHash), lt(consoleSessions.lastSeenAt, at)))
        .run();
    },

    async delete(tokenHash) {
      const deleted = db
        .delete(consoleSessions)
        .where(eq(consoleSessions.tokenHash, tokenHash))
        .returning({ tokenHash: consoleSessions.tokenHash })
        .all();
      return deleted.length > 0;
    },

    async deleteEnded(now, idleBefore) {
      const revokedKeys = db.select({ id: apiKeys.id }).from(apiKeys).where(isNotNull(apiKeys.revokedAt));
      const deleted = db
        .delete(consoleSessions)
        .where(
          or(
            lte(consoleSessions.expiresAt, now),
            lte(consoleSessions.lastSeenAt, idleBefore),
            inArray(consoleSessions.apiKeyId, revokedKeys),
          ),
        )
        .returning({ tokenHash: consoleSessions.tokenHash })
        .all();
      return deleted.length;
    },
  };
};
