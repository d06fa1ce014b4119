import type {
  ApiKeyRecord,
  ConsoleSessionRecord,
  ConsoleSessionStore,
  FoundConsoleSession,
  TenantRecord,
} from "../../ports.ts";
import { copy } from "./paging.ts";
import { duplicate, requireReference } from "./references.ts";

/** What the sessions read of the tenant store: a key with its tenant, revoked keys included. */
export type KeyWithTenant = (keyId: string) => { key: ApiKeyRecord; tenant: TenantRecord } | null;

/** Newest first: createdAt, then the hash (as the SQL stores order them). */
const newestFirst = (a: ConsoleSessionRecord, b: ConsoleSessionRecord): number =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.tokenHash < b.tokenHash ? 1 : -1);

export function createMemoryConsoleSessionStore(
  keyWithTenant: KeyWithTenant,
  tenantExists: (id: string) => boolean,
): ConsoleSessionStore {
  const sessions = new Map<string, ConsoleSessionRecord>();

  return {
    async create(session, { maxPerKey }) {
      // The SQL stores' foreign keys: the tenant and the key must exist.
      requireReference(
        tenantExists(session.tenantId) && keyWithTenant(session.apiKeyId) !== null,
        `console session of key ${session.apiKeyId}`,
      );
      if (sessions.has(session.tokenHash)) throw duplicate("console session");
      sessions.set(session.tokenHash, copy(session));
      const ofKey = [...sessions.values()].filter((other) => other.apiKeyId === session.apiKeyId);
      for (const old of ofKey.sort(newestFirst).slice(Math.max(0, maxPerKey))) sessions.delete(old.tokenHash);
    },
    async find(tokenHash): Promise<FoundConsoleSession | null> {
      const session = sessions.get(tokenHash);
      const owner = session ? keyWithTenant(session.apiKeyId) : null;
      if (!session || !owner) return null;
      return { session: copy(session), tenant: owner.tenant, key: owner.key };
    },
    async touch(tokenHash, at) {
      const session = sessions.get(tokenHash);
      if (session && session.lastSeenAt < at) session.lastSeenAt = at;
    },
    async delete(tokenHash) {
      return sessions.delete(tokenHash);
    },
    async deleteEnded(now, idleBefore) {
      let deleted = 0;
      for (const session of [...sessions.values()]) {
        const key = keyWithTenant(session.apiKeyId)?.key;
        const revoked = key !== undefined && key.revokedAt !== null;
        if (session.expiresAt <= now || session.lastSeenAt <= idleBefore || revoked) {
          sessions.delete(session.tokenHash);
          deleted++;
        }
      }
      return deleted;
    },
  };
}
