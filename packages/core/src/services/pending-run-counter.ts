import type { Clock } from "../ports.ts";

export interface PendingRunCounterOptions {
  /** The store's count of a tenant's pending runs: O(queue depth), so asked rarely. */
  countPending(tenantId: string): Promise<number>;
  clock: Clock;
  /**
   * A count older than this is taken again before it is used. It bounds what this process does
   * not see: runs accepted by other instances sharing the database, and runs that ended.
   */
  maxAgeMs?: number;
  /** At the cap, the count is taken again at most this often (a run may have ended meanwhile). */
  recountAtCapMs?: number;
}

/** One admitted run: exactly one of the two is called once its create is over. */
export interface PendingRunReservation {
  /** The run was committed. */
  created(): void;
  /** Nothing was created (a failure, or an idempotent replay). */
  abandoned(): void;
}

export interface PendingRunCounter {
  /** Admits one more pending run of the tenant, or null when it already has `limit`. */
  reserve(tenantId: string, limit: number): Promise<PendingRunReservation | null>;
  /** A pending run of the tenant ended through this process (a cancel): one place is free again. */
  ended(tenantId: string): void;
  /** Runs of the tenant created here without a reservation (a workflow's step runs): counted as created. */
  added(tenantId: string, count: number): void;
  /** Counts taken at start for every tenant with pending runs (the first creates then count nothing). */
  prime(counts: ReadonlyArray<{ tenantId: string; count: number }>): void;
}

interface TenantCount {
  /** The store's count when it was last taken. */
  counted: number;
  countedAt: number;
  /** Runs created here since then. */
  createdSince: number;
  /** Runs admitted here and still being created. */
  inFlight: number;
  /** A count being taken: concurrent requests wait for the same one. */
  counting: Promise<void> | null;
}

const DEFAULT_MAX_AGE_MS = 5_000;
const DEFAULT_RECOUNT_AT_CAP_MS = 250;

/**
 * The per-tenant pending cap without a COUNT per create. The estimate is the store's last count
 * plus the runs reserved here since; runs that end are not subtracted, so in one process it can
 * only overstate (never admits past the cap) and is corrected by a recount when it reaches the
 * cap. Nothing is kept across restarts: the first create of a tenant counts in the store. With
 * several instances, each recounts at least every `maxAgeMs`, so a tenant can exceed the cap by
 * at most what the other instances accept within that window.
 */
export function createPendingRunCounter(options: PendingRunCounterOptions): PendingRunCounter {
  const { clock } = options;
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const recountAtCapMs = options.recountAtCapMs ?? DEFAULT_RECOUNT_AT_CAP_MS;
  const counts = new Map<string, TenantCount>();

  const recount = (tenantId: string, entry: TenantCount): Promise<void> => {
    entry.counting ??= (async () => {
      const startedAt = clock.now().getTime();
      // Runs committed while counting may or may not be in the count: keep them (overstating).
      const createdBefore = entry.createdSince;
      try {
        const counted = await options.countPending(tenantId);
        entry.counted = counted;
        entry.countedAt = startedAt;
        entry.createdSince -= createdBefore;
      } finally {
        entry.counting = null;
      }
    })();
    return entry.counting;
  };

  return {
    async reserve(tenantId, limit) {
      let entry = counts.get(tenantId);
      if (entry === undefined) {
        entry = {
          counted: 0,
          countedAt: Number.NEGATIVE_INFINITY,
          createdSince: 0,
          inFlight: 0,
          counting: null,
        };
        counts.set(tenantId, entry);
      }
      const tenant = entry;
      const age = () => clock.now().getTime() - tenant.countedAt;
      const estimate = () => tenant.counted + tenant.createdSince + tenant.inFlight;
      if (age() >= maxAgeMs) await recount(tenantId, tenant);
      if (estimate() >= limit && age() >= recountAtCapMs) await recount(tenantId, tenant);
      if (estimate() >= limit) return null;
      tenant.inFlight++;
      let settled = false;
      const settle = (created: boolean) => {
        if (settled) return;
        settled = true;
        tenant.inFlight--;
        if (created) tenant.createdSince++;
      };
      return { created: () => settle(true), abandoned: () => settle(false) };
    },

    added(tenantId, count) {
      const entry = counts.get(tenantId);
      // No entry: the tenant's first reservation counts in the store, these runs included.
      if (entry !== undefined) entry.createdSince += count;
    },

    prime(primed) {
      const countedAt = clock.now().getTime();
      const totals = new Map<string, number>();
      for (const { tenantId, count } of primed) totals.set(tenantId, (totals.get(tenantId) ?? 0) + count);
      for (const [tenantId, counted] of totals) {
        if (counts.has(tenantId)) continue;
        counts.set(tenantId, { counted, countedAt, createdSince: 0, inFlight: 0, counting: null });
      }
    },

    ended(tenantId) {
      const entry = counts.get(tenantId);
      if (entry === undefined) return;
      if (entry.createdSince > 0) entry.createdSince--;
      else if (entry.counted > 0) entry.counted--;
    },
  };
}
