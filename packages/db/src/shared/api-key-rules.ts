import { type ApiKeyRecord, PromptrunError } from "@promptrun/core";

/** How revokeApiKeys names its keys (the TenantStore port). */
export interface ApiKeyMatch {
  id?: string;
  prefix?: string;
}

/** last_used_at is refreshed at most this often per key, so authentication rarely writes. */
export const LAST_USED_GRANULARITY_MS = 60_000;
/** Active keys a store remembers at once; beyond it the oldest entry goes. */
export const MAX_CACHED_KEYS = 10_000;

/** Whether authenticating `now` should write the key's last use (never written, or a minute old). */
export const lastUseIsStale = (lastUsedAt: Date | null, now: Date): boolean =>
  lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= LAST_USED_GRANULARITY_MS;

/** What a revocation selects: one id, or the active keys whose prefix starts with the given text. */
export type RevokeTarget = { id: string } | { prefix: string };

/** The revocation's selector; neither an id nor a non-empty prefix is invalid. */
export const revokeTarget = (match: ApiKeyMatch): RevokeTarget => {
  if (match.id !== undefined) return { id: match.id };
  if (match.prefix !== undefined && match.prefix !== "") return { prefix: match.prefix };
  throw new PromptrunError("invalid", "revokeApiKeys needs an id or a prefix");
};

/** The keys to revoke: a prefix naming several keys revokes nothing (the caller must be more specific). */
export const keysToRevoke = (target: RevokeTarget, found: ApiKeyRecord[]): ApiKeyRecord[] =>
  "prefix" in target && found.length > 1 ? [] : found;
