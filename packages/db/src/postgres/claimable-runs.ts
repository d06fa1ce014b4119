import { type SQL, sql } from "drizzle-orm";
import type { PostgresQueryable } from "./postgres-context.ts";

const PRIORITIES = ["onsite", "normal", "low"] as const;

type Priority = (typeof PRIORITIES)[number];

/** Oldest pending runs of a class examined per poll before the per-channel fallback kicks in. */
const WINDOW_PER_LIMIT = 4;
const MIN_WINDOW = 256;

/** The tenant of `alias`'s row holds fewer than `limit` live leases (or no limit was asked). */
const tenantBelow = (alias: string, now: Date, limit: number | undefined): SQL =>
  limit === undefined
    ? sql`true`
    : sql`(select count(*) from runs leased
        where leased.tenant_id = ${sql.raw(alias)}.tenant_id and leased.status = 'pending'
          and leased.lease_owner is not null
          and leased.lease_until > ${now.toISOString()}::timestamptz) < ${limit}`;

/**
 * The oldest `window` pending runs of one class that are not paused (runs_queue_idx leaves paused
 * runs out, however many wait for their callers), and of those the lease-free channel heads (at
 * most `limit`, oldest first): a run behind a paused one is not a head, as the paused run is
 * pending. The last row (id NULL) carries how many runs the window held.
 * Cost: `window` index entries and as many index probes, whatever the backlog.
 */
const windowQuery = (priority: Priority, now: Date, window: number, limit: number, tenantFree: SQL) => sql`
  with win as materialized (
    select id, tenant_id, thread_id, channel, created_at, lease_owner, lease_until from runs
    where status = 'pending' and paused_step is null and priority = ${sql.raw(`'${priority}'`)}
    order by created_at, id limit ${window})
  (select win.id, 0 as scanned from win
   where (win.lease_owner is null or win.lease_until <= ${now.toISOString()}::timestamptz)
     and not exists (
       select 1 from runs earlier
       where earlier.status = 'pending' and earlier.tenant_id = win.tenant_id
         and earlier.thread_id = win.thread_id and earlier.channel = win.channel
         and (earlier.created_at, earlier.id) < (win.created_at, win.id))
     and ${tenantFree}
   order by win.created_at, win.id limit ${limit})
  union all
  select null, count(*) from win`;

/**
 * Every channel's head by a loose index scan of runs_channel_queue_idx (one index descent per
 * channel with pending runs), keeping the lease-free ones that are not paused (a channel whose
 * head is paused yields nothing), at most `limit` per class. Used when
 * a class's window held too few heads: deep channels (thousands of runs queued behind a few
 * heads) would otherwise hide the heads of newer channels. A tenant at its lease limit is
 * skipped in one descent (none of its heads could be claimed): a large backlog of a full
 * tenant, polled on every wake-up, would otherwise cost one descent per channel of it.
 */
const headsQuery = (now: Date, limit: number, tenantLimit: number | undefined) => sql`
  with recursive channel_heads as (
    (select start.tenant_id, start.thread_id, start.channel, start.created_at, start.id,
       not ${tenantBelow("start", now, tenantLimit)} as tenant_full
     from runs start where start.status = 'pending'
     order by start.tenant_id, start.thread_id, start.channel, start.created_at, start.id limit 1)
    union all
    select step.tenant_id, step.thread_id, step.channel, step.created_at, step.id,
      not ${tenantBelow("step", now, tenantLimit)} as tenant_full
    from channel_heads head, lateral (
      select * from (
        (select tenant_id, thread_id, channel, created_at, id from runs
         where not head.tenant_full and status = 'pending'
           and (tenant_id, thread_id, channel) > (head.tenant_id, head.thread_id, head.channel)
         order by tenant_id, thread_id, channel, created_at, id limit 1)
        union all
        (select tenant_id, thread_id, channel, created_at, id from runs
         where head.tenant_full and status = 'pending' and tenant_id > head.tenant_id
         order by tenant_id, thread_id, channel, created_at, id limit 1)) next limit 1) step)
  select id from (
    select runs.id, row_number() over (partition by runs.priority order by runs.created_at, runs.id) as position
    from channel_heads join runs on runs.id = channel_heads.id
    where not channel_heads.tenant_full and runs.paused_step is null
      and (runs.lease_owner is null or runs.lease_until <= ${now.toISOString()}::timestamptz)) ranked
  where position <= ${limit}`;

/**
 * Ids of the runs an instance may claim now (RunStore.listClaimable): lease-free channel heads,
 * up to `limit` per class. Cheap in both shapes of a large backlog: many shallow channels (the
 * window finds heads at once) and few deep ones (the per-channel scan visits few channels).
 */
export const listClaimableIds = async (
  db: PostgresQueryable,
  now: Date,
  limit: number,
  tenantLimit?: number,
): Promise<string[]> => {
  const window = Math.max(MIN_WINDOW, limit * WINDOW_PER_LIMIT);
  const perClass = await Promise.all(
    PRIORITIES.map((priority) =>
      db.execute<{ id: string | null; scanned: string | number }>(
        windowQuery(priority, now, window, limit, tenantBelow("win", now, tenantLimit)),
      ),
    ),
  );
  const ids = new Set<string>();
  let needsHeadScan = false;
  for (const rows of perClass) {
    let found = 0;
    for (const row of rows) {
      if (row.id !== null) {
        ids.add(row.id);
        found++;
      } else if (Number(row.scanned) >= window && found < limit) {
        needsHeadScan = true;
      }
    }
  }
  if (needsHeadScan) {
    for (const row of await db.execute<{ id: string }>(headsQuery(now, limit, tenantLimit))) ids.add(row.id);
  }
  return [...ids];
};
