import {
  createRunRequestSchema,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
  isUuid,
} from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import type { RunEngine } from "../engine-port.ts";
import { conflict, forbidden, invalid, notFound, PromptrunError, rateLimited } from "../errors.ts";
import { checkMediaInputs, type MediaCheckOptions } from "../inputs/media-input.ts";
import type { Clock, IdempotencyRecord, NewRun, RunRecord, Store } from "../ports.ts";
import { pendingRunRecord } from "../run-record.ts";
import { createRequestFingerprint } from "../security/request-fingerprint.ts";
import type { SecretBox } from "../security/secret-box.ts";
import type { RateLimitService, RunService } from "../services.ts";
import { boundedPage, clampPage, MAX_PAGE_BYTES } from "./page.ts";
import { createPendingRunCounter, type PendingRunCounter } from "./pending-run-counter.ts";
import { runUsage, toStoreFilter } from "./run-list-filters.ts";
import { createRunMessages } from "./run-messages.ts";
import { createRunRender } from "./run-render.ts";
import { checkRunBody, requireRunEnvironment, resolveRunVersion } from "./run-request-checks.ts";
import { createSubmitToolOutputs } from "./submit-tool-outputs.ts";
import { toPromptRun } from "./to-prompt-run.ts";
import { uuidv7 } from "./uuidv7.ts";

export interface RunServiceDependencies {
  store: Store;
  config: Pick<
    PromptrunConfig,
    | "maxPendingRunsPerTenant"
    | "idempotencyTtlSeconds"
    | "secret"
    | "previousSecrets"
    | "allowPrivateUrls"
    | "memory"
  >;
  clock: Clock;
  engine: RunEngine;
  secrets: SecretBox;
  rateLimits: RateLimitService;
  newId?: () => string;
  /** The per-tenant pending cap's bookkeeping; default: counted in the store now and then. */
  pendingRuns?: PendingRunCounter;
  /** Byte budget of one list page (default MAX_PAGE_BYTES); tests lower it. */
  maxPageBytes?: number;
}

const REUSED_KEY = "Idempotency-Key reused with a different request";

export function createRunService(dependencies: RunServiceDependencies): RunService {
  const { store, config, clock, engine, secrets, rateLimits } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7(clock.now().getTime()));
  const maxPageBytes = dependencies.maxPageBytes ?? MAX_PAGE_BYTES;
  const pendingRuns =
    dependencies.pendingRuns ??
    createPendingRunCounter({ countPending: (tenantId) => store.runs.countPending(tenantId), clock });

  const requireRun = async (tenantId: string, id: string): Promise<RunRecord> => {
    // Malformed ids and other tenants' runs read exactly like unknown ones (docs/PRODUCT-RULES.md: never 403).
    const run = isUuid(id) ? await store.runs.get(tenantId, id.toLowerCase()) : null;
    if (!run) throw notFound(`run '${id}' not found`);
    return run;
  };

  const fingerprint = createRequestFingerprint(config.secret, config.previousSecrets);
  const mediaChecks: MediaCheckOptions = { allowPrivateUrls: config.allowPrivateUrls };

  /** Stripe semantics: the same key and request replay the original answer; another request conflicts. */
  const replay = (record: IdempotencyRecord, fingerprinted: unknown) => {
    if (!fingerprint.matches(record.requestHash, fingerprinted)) throw conflict(REUSED_KEY);
    return { id: record.runId, thread: record.threadId, replayed: true };
  };

  return {
    // long-function: the create-run checks in their documented order (docs/PRODUCT-RULES.md), one numbered sequence.
    async create(tenant, slug, versionSegment, body, options) {
      // 0. The subscription (403 precedes 404, docs/PRODUCT-RULES.md). The REST adapter checks it too, before
      // content type and size; this keeps tRPC and the CLI from ever starting a run without one.
      if (!tenant.subscriptionActive) throw forbidden("no active subscription");

      // 1. The prompt version (404 before any body validation); 2. the body, then 3. the inputs
      // against this version's declarations and the model; 4. the environment (run-request-checks.ts).
      const version = await resolveRunVersion(store, tenant.id, slug, versionSegment);
      const { request, inputs } = checkRunBody(version, createRunRequestSchema, body);
      const environment = (await requireRunEnvironment(store, tenant.id, request.environment)).name;

      const idempotencyKey = options?.idempotencyKey;
      // The one rule for every transport (REST header, tRPC field, CLI).
      if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey))
        throw invalid(IDEMPOTENCY_KEY_RULE);

      // 5. Rate limit: every request counts, replays included (as at Stripe).
      await rateLimits.take(tenant.id, "runs.create");

      // 5b. Image and file inputs, the checks that need I/O: a data URL's bytes must be what it
      // declares, an https URL must not resolve to a private address. After the rate limit, so
      // nobody can make the server resolve names faster than it creates runs; before any write.
      await checkMediaInputs(version.definition.inputs, inputs, mediaChecks);

      // 6. Idempotency, before the pending cap: a replay creates nothing, so a full queue must not refuse it.
      const now = clock.now();
      const notBefore = new Date(now.getTime() - config.idempotencyTtlSeconds * 1000);
      // Fingerprinted only when there is a key; canonical JSON of the parsed request, so key order
      // does not matter; keyed (HMAC) because the request holds envVars values.
      const fingerprinted = { slug, version: versionSegment, request };
      const requestHash = idempotencyKey === undefined ? "" : fingerprint.of(fingerprinted);
      if (idempotencyKey !== undefined) {
        const existing = await store.runs.findIdempotency(tenant.id, idempotencyKey, notBefore);
        if (existing) return replay(existing, fingerprinted);
      }

      // 7. The run: envVars only ever reach the store encrypted.
      const envVars = request.envVars;
      const hasEnvVars = envVars !== undefined && Object.keys(envVars).length > 0;
      const run: NewRun = {
        id: newId(),
        tenantId: tenant.id,
        threadId: request.thread?.toLowerCase() ?? newId(),
        channel: request.channel ?? "default",
        promptId: version.promptId,
        promptVersionId: version.id,
        promptSlug: version.slug,
        promptVersion: version.version,
        priority: request.priority ?? "normal",
        environment,
        inputs,
        metadata: request.metadata ?? {},
        encryptedEnvVars: hasEnvVars ? secrets.encryptJson(envVars) : null,
        createdAt: now,
      };
      const idempotency: IdempotencyRecord | undefined =
        idempotencyKey === undefined
          ? undefined
          : {
              tenantId: tenant.id,
              key: idempotencyKey,
              requestHash,
              runId: run.id,
              threadId: run.threadId,
              createdAt: now,
            };

      // 8. Queue cap per tenant (kept in memory: a COUNT per create grows with the queue).
      const reservation = await pendingRuns.reserve(tenant.id, config.maxPendingRunsPerTenant);
      if (reservation === null)
        throw rateLimited(
          `too many pending runs (limit ${config.maxPendingRunsPerTenant}); retry when some have finished`,
          1,
        );
      try {
        await store.runs.create(run, idempotency, { idempotencyExpiredBefore: notBefore });
        reservation.created();
      } catch (error) {
        reservation.abandoned();
        // A concurrent request with the same key won the race: answer as its replay.
        if (idempotencyKey !== undefined && PromptrunError.isInstance(error) && error.code === "conflict") {
          const winner = await store.runs.findIdempotency(tenant.id, idempotencyKey, notBefore);
          if (winner) return replay(winner, fingerprinted);
        }
        throw error;
      }
      engine.enqueue(pendingRunRecord(run), hasEnvVars ? envVars : undefined);
      return { id: run.id, thread: run.threadId, replayed: false };
    },

    render: createRunRender({ store, config, rateLimits }),

    async get(tenantId, id) {
      return toPromptRun(await requireRun(tenantId, id));
    },

    messages: createRunMessages({ store, config, requireRun }),

    async list(tenantId, filter, page) {
      const storeFilter = toStoreFilter(filter);
      const { cursor, limit } = clampPage(page);
      return boundedPage(
        (pageLimit) => store.runs.list(tenantId, storeFilter, { cursor, limit: pageLimit }),
        toPromptRun,
        limit,
        maxPageBytes,
      );
    },

    usage: (tenantId, request) => runUsage(store, clock, tenantId, request),

    async cancel(tenantId, id) {
      const run = await requireRun(tenantId, id);
      if (run.status !== "pending") throw conflict("run has already ended");
      // The engine ends the run (failed, "cancelled", keeping the cost so far); if it finished on
      // its own meanwhile, the re-read shows that outcome instead.
      if (await engine.cancel(run.id)) pendingRuns.ended(tenantId);
      return toPromptRun(await requireRun(tenantId, run.id));
    },

    submitToolOutputs: createSubmitToolOutputs({
      store,
      config,
      clock,
      engine,
      fingerprint,
      requireRun,
      replay,
    }),
  };
}
