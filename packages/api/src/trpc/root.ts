import { type TenantRecord, unauthorized } from "@promptrun/core";
import { initTRPC } from "@trpc/server";
import type { Caller, TrpcContext } from "./context.ts";
import { formatTrpcError } from "./error-formatter.ts";

export interface TrpcRootOptions {
  /** SSE subscriptions send a ping this often (Bun closes a response that stays silent). */
  pingIntervalMs: number;
}

/** The tRPC instance: context, SSE pings, the error formatter. One per handler (pings are configurable). */
export function createTrpcRoot(options: TrpcRootOptions) {
  return initTRPC.context<TrpcContext>().create({
    isDev: false,
    sse: {
      ping: { enabled: true, intervalMs: options.pingIntervalMs },
      // A client that hears nothing for three pings reconnects (with its last event id).
      client: { reconnectAfterInactivityMs: options.pingIntervalMs * 3 },
    },
    errorFormatter: ({ error, path, shape }) =>
      formatTrpcError({ error, path, defaultHttpStatus: shape.data.httpStatus }),
  });
}

export type TrpcRoot = ReturnType<typeof createTrpcRoot>;

const STREAM_TOKEN_SCOPE =
  "a stream token only grants run.get, workflowRun.get and thread.onEvents of its thread; use an API key (Authorization: Bearer <API key>)";

/** The tenant of an API-key caller; unauthorized otherwise (the key's own error when it was refused). */
export function requireTenant(caller: Caller): TenantRecord {
  switch (caller.kind) {
    case "tenant":
      return caller.tenant;
    case "rejected":
      throw caller.error;
    case "stream-token":
      throw unauthorized(STREAM_TOKEN_SCOPE);
    case "anonymous":
      throw unauthorized("missing API key (Authorization: Bearer <API key>)");
  }
}

export function createProcedures(t: TrpcRoot) {
  /** Callers with an API key; `ctx.tenant` is theirs. */
  const tenantProcedure = t.procedure.use(({ ctx, next }) =>
    next({ ctx: { tenant: requireTenant(ctx.caller) } }),
  );
  /**
   * Writes that add to or change what a tenant has (prompts, keys, env vars, webhooks) need an
   * active subscription (403), like creating runs. Reads, revoking keys, deleting webhooks and
   * unsetting env vars stay open, so a lapsed tenant can still clean up.
   */
  const subscribedProcedure = tenantProcedure.use(({ ctx, next }) => {
    ctx.services.auth.requireActiveSubscription(ctx.tenant);
    return next();
  });
  /** Tenant administration: only with `x-promptrun-admin-token` (disabled when no token is configured). */
  const operatorProcedure = t.procedure.use(({ ctx, next }) => {
    if (!ctx.isOperator) throw unauthorized("admin procedures need a valid x-promptrun-admin-token header");
    return next();
  });
  return { publicProcedure: t.procedure, tenantProcedure, subscribedProcedure, operatorProcedure };
}

export type Procedures = ReturnType<typeof createProcedures>;
