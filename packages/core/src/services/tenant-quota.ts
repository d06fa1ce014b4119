import type { TenantQuotas } from "../config.ts";
import { conflict } from "../errors.ts";

export type QuotaName = keyof TenantQuotas;

/** How each quota reads in an error, and the setting an operator raises it with. */
const QUOTA_TEXT: Record<QuotaName, { noun: string; setting: string; remedy: string }> = {
  apiKeys: { noun: "active API keys", setting: "PROMPTRUN_MAX_API_KEYS", remedy: "revoke one" },
  environments: { noun: "environments", setting: "PROMPTRUN_MAX_ENVIRONMENTS", remedy: "reuse one" },
  webhooks: { noun: "webhooks", setting: "PROMPTRUN_MAX_WEBHOOKS", remedy: "delete one" },
  promptVersions: {
    noun: "prompt versions",
    setting: "PROMPTRUN_MAX_PROMPT_VERSIONS",
    remedy: "versions are never deleted",
  },
};

export interface QuotaGuard {
  readonly limit: number;
  /**
   * Runs `action` for a tenant only after every earlier call for the same tenant has finished,
   * so a count read inside it stays true until its write: two concurrent creates in this process
   * cannot both take the last slot. Other processes (the CLI beside the server, other instances)
   * keep their own queue; see docs/SECURITY.md for that bound.
   */
  exclusive<T>(tenantId: string, action: () => Promise<T>): Promise<T>;
  /** Throws `conflict` (409) naming the quota when `used + adding` would pass the limit. */
  assertRoom(used: number, adding?: number): void;
}

export function createQuotaGuard(quota: QuotaName, limit: number): QuotaGuard {
  const tails = new Map<string, Promise<void>>();
  const text = QUOTA_TEXT[quota];
  return {
    limit,
    async exclusive(tenantId, action) {
      const previous = tails.get(tenantId) ?? Promise.resolve();
      let release = () => {};
      const done = new Promise<void>((resolve) => {
        release = resolve;
      });
      const tail = previous.then(() => done);
      tails.set(tenantId, tail);
      await previous;
      try {
        return await action();
      } finally {
        release();
        if (tails.get(tenantId) === tail) tails.delete(tenantId);
      }
    },
    assertRoom(used, adding = 1) {
      if (used + adding <= limit) return;
      throw conflict(
        `quota exceeded: a tenant may have at most ${limit} ${text.noun} (has ${used}${adding > 1 ? `, this would add ${adding}` : ""}); ${text.remedy}, or the operator can raise ${text.setting}`,
      );
    },
  };
}
