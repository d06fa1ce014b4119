import type { ConsoleSessionStore } from "@promptrun/core";
import { and, desc, eq, inArray, isNotNull, lt, lte, notInArray, or } from "drizzle-orm";
import { apiKeys, consoleSessions, tenants } from "../schema/postgres.ts";
import type { PostgresContext } from "./postgres-context.ts";
import { withConstraintErrors } from "./postgres-errors.ts";

/**
 * Console sessions (docs/console.md "Serving and sign-in"). The lookup runs on every console
 * request: one query joining the key and the tenant, never cached (unlike API keys), so a key
 * revoked on any instance ends its sessions at the next request.
 */
export const createConsoleSessionStore = ({ db }: PostgresContext): ConsoleSessionStore => ({
  async create(session, { maxPerKey }) {
    await withConstraintErrors("console session", () =>
      db.transaction(async (tx) => {
        await tx.insert(consoleSessions).values(session);
        const newest = tx
          .select({ tokenHash: consoleSessions.tokenHash })
          .from(consoleSessions)
          .where(eq(consoleSessions.apiKeyId, session.apiKeyId))
          .orderBy(desc(consoleSessions.createdAt), desc(consoleSessions.tokenHash))
          .limit(maxPerKey);
        await tx
          .delete(consoleSessions)
          .where(
            and(
              eq(consoleSessions.apiKeyId, session.apiKeyId),
              notInArray(consoleSessions.tokenHash, newest),
            ),
          );
      }),
    );
  },

  async find(tokenHash) {
    const [row] = await db
      .select({ session: consoleSessions, tenant: tenants, key: apiKeys })
      .from(consoleSessions)
      .innerJoin(apiKeys, eq(apiKeys.id, consoleSessions.apiKeyId))
      .innerJoin(tenants, eq(tenants.id, consoleSessions.tenantId))
      .where(eq(consoleSessions.tokenHash, tokenHash));
    return row ?? null;
  },

  async touch(tokenHash, at) {
    await db
      .update(consoleSessions)
      .set({ lastSeenAt: at })
      .where(and(eq(consoleSessions.tokenHash, tokenHash), lt(consoleSessions.lastSeenAt, at)));
  },

  async delete(tokenHash) {
    const deleted = await db
      .delete(consoleSessions)
      .where(eq(consoleSessions.tokenHash, tokenHash))
      .returning({ tokenHash: consoleSessions.tokenHash });
    return deleted.length > 0;
  },

  async deleteEnded(now, idleBefore) {
    const revokedKeys = db.select({ id: apiKeys.id }).from(apiKeys).where(isNotNull(apiKeys.revokedAt));
    const deleted = await db
      .delete(consoleSessions)
      .where(
        or(
          lte(consoleSessions.expiresAt, now),
          lte(consoleSessions.lastSeenAt, idleBefore),
          inArray(consoleSessions.apiKeyId, revokedKeys),
        ),
      )
      .returning({ tokenHash: consoleSessions.tokenHash });
    return deleted.length;
  },
});
