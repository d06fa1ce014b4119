import { createHash, randomBytes } from "node:crypto";
import { consoleSignInRequestSchema } from "@promptrun/contract";
import { PromptrunError, unauthorized } from "../errors.ts";
import type { AuthenticatedTenant, Clock, ConsoleSessionRecord, Store } from "../ports.ts";
import { apiKeyHashesEqual } from "../security/api-keys.ts";
import type { AuthService, ConsoleSessionService } from "../services.ts";
import { createSignInFailures, type SignInFailures } from "./sign-in-failures.ts";

/** The session lifetimes and limits of docs/console.md "Serving and sign-in". */
export const CONSOLE_SESSION_RULES = {
  /** The longest a session lasts from sign-in, however busy. */
  maxAgeMs: 7 * 24 * 3600_000,
  /** A session unused this long has ended. */
  idleMs: 12 * 3600_000,
  /** lastSeenAt is written at most this often per session (no write per request). */
  lastSeenGranularityMs: 60_000,
  /** Live sessions per API key; signing in once more ends the oldest. */
  maxPerKey: 50,
  /** Failed sign-ins allowed per client address within `failureWindowMs`; the next attempt is 429. */
  maxFailures: 10,
  failureWindowMs: 60_000,
} as const;

/** 32 random bytes, base64url: what the cookie carries. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

const SIGN_IN_BODY = 'the body must be {"apiKey": "<API key>"}';
const WRONG_KEY =
  "this API key is not valid: it is unknown, revoked or mistyped (keys start with pr_live_); check it and try again";
const SESSION_ENDED =
  "the console session has ended (expired, signed out or its API key revoked): sign in again";

export interface ConsoleSessionServiceDependencies {
  store: Store;
  clock: Clock;
  auth: Pick<AuthService, "authenticateKey">;
  /** Replaces the per-process failed sign-in counter (several instances share a Redis one; tests). */
  failures?: SignInFailures | undefined;
}

/** The key of a sign-in body, or 400. */
function apiKeyOf(body: unknown): string {
  const parsed = consoleSignInRequestSchema.safeParse(body);
  if (!parsed.success) throw new PromptrunError("invalid", SIGN_IN_BODY);
  return parsed.data.apiKey;
}

export function createConsoleSessionService(
  dependencies: ConsoleSessionServiceDependencies,
): ConsoleSessionService {
  const { store, clock, auth } = dependencies;
  const rules = CONSOLE_SESSION_RULES;
  const failures =
    dependencies.failures ??
    createSignInFailures({ clock, limit: rules.maxFailures, windowMs: rules.failureWindowMs });

  /** A wrong key counts against the address; anything else the key check throws passes through. */
  const tenantOfKey = async (key: string, clientAddress: string): Promise<AuthenticatedTenant> => {
    try {
      return await auth.authenticateKey(key);
    } catch (error) {
      if (!PromptrunError.isInstance(error) || error.code !== "unauthorized") throw error;
      await failures.record(clientAddress);
      throw unauthorized(WRONG_KEY);
    }
  };

  /** Ended sessions are deleted on each sign-in (rare), so the table holds live ones and few others. */
  const sweep = async (now: Date) => {
    try {
      await store.consoleSessions.deleteEnded(now, new Date(now.getTime() - rules.idleMs));
    } catch {
      // Housekeeping only: the sign-in itself succeeded.
    }
  };

  return {
    async signIn(body, clientAddress) {
      await failures.check(clientAddress);
      const tenant = await tenantOfKey(apiKeyOf(body), clientAddress);
      if (tenant.apiKeyId === undefined) throw new Error("an authenticated key has no id");
      const now = clock.now();
      const token = randomBytes(32).toString("base64url");
      const session: ConsoleSessionRecord = {
        tokenHash: hashToken(token),
        tenantId: tenant.id,
        apiKeyId: tenant.apiKeyId,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(now.getTime() + rules.maxAgeMs),
      };
      await store.consoleSessions.create(session, { maxPerKey: rules.maxPerKey });
      await sweep(now);
      return { token, tenant: { id: tenant.id, name: tenant.name }, expiresAt: session.expiresAt };
    },

    async authenticate(token) {
      if (!TOKEN_PATTERN.test(token)) throw unauthorized(SESSION_ENDED);
      const hash = hashToken(token);
      const found = await store.consoleSessions.find(hash);
      if (found === null || !apiKeyHashesEqual(hash, found.session.tokenHash))
        throw unauthorized(SESSION_ENDED);
      const { session, tenant, key } = found;
      const now = clock.now().getTime();
      const ended =
        key.revokedAt !== null ||
        now >= session.expiresAt.getTime() ||
        now - session.lastSeenAt.getTime() >= rules.idleMs;
      if (ended) {
        await store.consoleSessions.delete(hash).catch(() => false);
        throw unauthorized(SESSION_ENDED);
      }
      if (now - session.lastSeenAt.getTime() >= rules.lastSeenGranularityMs) {
        // Bookkeeping only: a busy database must not fail the request.
        await store.consoleSessions.touch(hash, new Date(now)).catch(() => {});
      }
      return { ...tenant, apiKeyId: key.id, apiKeyPrefix: key.prefix };
    },

    async signOut(token) {
      if (TOKEN_PATTERN.test(token)) await store.consoleSessions.delete(hashToken(token));
    },
  };
}
