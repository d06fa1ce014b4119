import { conflict } from "../../errors.ts";
import type { IdempotencyRecord, VersionSelector } from "../../ports.ts";
import type {
  WorkflowRecord,
  WorkflowRunListFilter,
  WorkflowRunRecord,
  WorkflowStore,
  WorkflowVersionRecord,
} from "../../workflows/ports.ts";
import { copy, decodeCursor, isNumber, isString, isTimeAndId, paginate } from "./paging.ts";
import type { MemoryOutbox } from "./prompts.ts";
import { type MemoryReferences, requireReference } from "./references.ts";
import type { MemoryRunStore } from "./runs.ts";

/** What the workflow store needs of the memory run store: step runs inserted in an advance's "transaction". */
type StepRunWriter = Pick<MemoryRunStore, "checkInsert" | "insert" | "ensureThread" | "pendingStepRuns">;

type TimeAndId = { createdAt: Date; id: string };
const newestFirst = (a: TimeAndId, b: TimeAndId) =>
  b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const matchesFilter = (run: WorkflowRunRecord, filter: WorkflowRunListFilter): boolean =>
  (filter.slug === undefined || run.workflowSlug === filter.slug) &&
  (filter.version === undefined || run.workflowVersion === filter.version) &&
  (filter.status === undefined || run.status === filter.status) &&
  (filter.threadId === undefined || run.threadId === filter.threadId) &&
  (filter.environment === undefined || run.environment === filter.environment) &&
  (filter.createdAfter === undefined || run.createdAt.getTime() >= filter.createdAfter.getTime()) &&
  (filter.createdBefore === undefined || run.createdAt.getTime() < filter.createdBefore.getTime());

/**
 * In-memory WorkflowStore (definitions and runs), with the port's semantics: an identical push
 * creates nothing, `advance` is a compare-and-set on revision that writes the steps, the new step
 * runs and the end's outbox rows together or not at all. No method awaits in between, so each is
 * atomic with respect to other calls, like one transaction.
 */
export function createMemoryWorkflowStore(
  references: MemoryReferences,
  stepRuns: StepRunWriter,
  outbox: MemoryOutbox,
): WorkflowStore {
  /** key: `${tenantId}/${slug}` */
  const workflows = new Map<string, WorkflowRecord>();
  const versions = new Map<string, WorkflowVersionRecord>();
  const runs = new Map<string, WorkflowRunRecord>();
  /** key: `${tenantId}/${idempotencyKey}` */
  const idempotency = new Map<string, IdempotencyRecord>();
  const workflowKey = (tenantId: string, slug: string) => `${tenantId}/${slug}`;

  const versionsOf = (workflow: WorkflowRecord) =>
    [...versions.values()].filter((version) => version.workflowId === workflow.id);
  const find = (workflow: WorkflowRecord, selector: VersionSelector): WorkflowVersionRecord | undefined => {
    const candidates = versionsOf(workflow);
    switch (selector.kind) {
      case "id":
        return candidates.find((version) => version.id === selector.id);
      case "number":
        return candidates.find((version) => version.version === selector.version);
      case "latest":
        return candidates.find((version) => version.version === workflow.latestVersion);
      case "tag": {
        const number = workflow.tags[selector.tag];
        return number === undefined ? undefined : candidates.find((version) => version.version === number);
      }
    }
  };
  const tagsOf = (version: WorkflowVersionRecord): string[] => {
    const workflow = workflows.get(workflowKey(version.tenantId, version.slug));
    if (!workflow) return [];
    return Object.entries(workflow.tags)
      .filter(([, number]) => number === version.version)
      .map(([tag]) => tag)
      .sort();
  };

  return {
    async pushVersion(input) {
      requireReference(references.tenant(input.tenantId), `workflow ${input.slug}`);
      const key = workflowKey(input.tenantId, input.slug);
      const existing = workflows.get(key);
      const workflow: WorkflowRecord = existing ?? {
        id: input.newWorkflowId,
        tenantId: input.tenantId,
        slug: input.slug,
        latestVersion: 0,
        description: null,
        tags: {},
        createdAt: input.at,
        updatedAt: input.at,
      };
      const latest = existing ? find(existing, { kind: "latest" }) : undefined;
      const created = latest?.contentHash !== input.contentHash;
      const version: WorkflowVersionRecord =
        latest && !created
          ? latest
          : {
              id: input.newVersionId,
              workflowId: workflow.id,
              tenantId: input.tenantId,
              slug: input.slug,
              version: workflow.latestVersion + 1,
              definition: copy(input.definition),
              contentHash: input.contentHash,
              createdAt: input.at,
            };
      if (!existing) workflows.set(key, workflow);
      if (created) {
        versions.set(version.id, version);
        workflow.latestVersion = version.version;
        workflow.description = input.definition.description ?? null;
        workflow.updatedAt = input.at;
      }
      for (const tag of input.tags) {
        if (workflow.tags[tag] === version.version) continue;
        workflow.tags[tag] = version.version;
        workflow.updatedAt = input.at;
      }
      return { version: copy(version), created, tags: tagsOf(version) };
    },
    async setTag(tenantId, slug, version, tag, at) {
      const workflow = workflows.get(workflowKey(tenantId, slug));
      const found = workflow ? find(workflow, { kind: "number", version }) : undefined;
      if (!workflow || !found) return null;
      workflow.tags[tag] = version;
      workflow.updatedAt = at;
      return copy(found);
    },
    async resolveVersion(tenantId, slug, selector) {
      const workflow = workflows.get(workflowKey(tenantId, slug));
      const version = workflow ? find(workflow, selector) : undefined;
      return version ? copy(version) : null;
    },
    async tagsOf(versionId) {
      const version = versions.get(versionId);
      return version ? tagsOf(version) : [];
    },
    async getWorkflow(tenantId, slug) {
      const workflow = workflows.get(workflowKey(tenantId, slug));
      return workflow ? copy(workflow) : null;
    },
    async listWorkflows(tenantId, page) {
      const sorted = [...workflows.values()]
        .filter((workflow) => workflow.tenantId === tenantId)
        .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
      const result = paginate(
        sorted,
        page,
        (workflow) => workflow.slug,
        (workflow, slug) => workflow.slug > slug,
        isString,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async listVersions(tenantId, slug, page) {
      if (page.cursor) decodeCursor(page.cursor, isNumber);
      const workflow = workflows.get(workflowKey(tenantId, slug));
      if (!workflow) return { items: [], nextCursor: null };
      const sorted = versionsOf(workflow).sort((a, b) => b.version - a.version);
      const result = paginate(
        sorted,
        page,
        (version) => version.version,
        (version, number) => version.version < number,
        isNumber,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },

    async createRun(run, idempotencyRecord, options) {
      if (runs.has(run.id)) throw conflict(`workflow run ${run.id} already exists`);
      requireReference(
        references.tenant(run.tenantId) && versions.has(run.workflowVersionId),
        `workflow run ${run.id}`,
      );
      if (idempotencyRecord) {
        const key = `${idempotencyRecord.tenantId}/${idempotencyRecord.key}`;
        const existing = idempotency.get(key);
        const expiredBefore = options?.idempotencyExpiredBefore;
        const expired = existing && expiredBefore && existing.createdAt < expiredBefore;
        if (existing && !expired) throw conflict("Idempotency-Key already used");
        idempotency.set(key, copy(idempotencyRecord));
      }
      stepRuns.ensureThread(run.tenantId, run.threadId, run.createdAt);
      runs.set(run.id, {
        ...copy(run),
        status: "pending",
        startedAt: null,
        finishedAt: null,
        output: null,
        outputJson: null,
        error: null,
        tokenUsage: null,
        cost: null,
        revision: 0,
      });
    },
    async findIdempotency(tenantId, key, notBefore) {
      const record = idempotency.get(`${tenantId}/${key}`);
      return record && record.createdAt >= notBefore ? copy(record) : null;
    },
    async getRun(tenantId, id) {
      const run = runs.get(id);
      return run && run.tenantId === tenantId ? copy(run) : null;
    },
    async getRunById(id) {
      const run = runs.get(id);
      return run ? copy(run) : null;
    },
    async listRuns(tenantId, filter, page) {
      const sorted = [...runs.values()]
        .filter((run) => run.tenantId === tenantId && matchesFilter(run, filter))
        .sort(newestFirst);
      const result = paginate(
        sorted,
        page,
        (run): [number, string] => [run.createdAt.getTime(), run.id],
        (run, [time, id]) =>
          run.createdAt.getTime() < time || (run.createdAt.getTime() === time && run.id < id),
        isTimeAndId,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async listPendingRunIds() {
      return [...runs.values()]
        .filter((run) => run.status === "pending")
        .sort((a, b) => newestFirst(b, a))
        .map((run) => run.id);
    },
    async advance(id, expectedRevision, change) {
      const run = runs.get(id);
      if (run?.status !== "pending" || run.revision !== expectedRevision) return false;
      // Everything checked before anything is written: all or nothing, like a transaction.
      for (const newRun of change.newRuns) stepRuns.checkInsert(newRun);
      const deliveries = change.end?.deliveries ?? [];
      outbox.check(deliveries);
      for (const newRun of change.newRuns) stepRuns.insert(newRun);
      outbox.insert(deliveries);
      run.steps = copy(change.steps);
      if (change.startedAt !== undefined && run.startedAt === null) run.startedAt = change.startedAt;
      if (change.end) {
        const { end } = change;
        run.status = end.status;
        run.output = end.output;
        run.outputJson = copy(end.outputJson ?? null);
        run.error = end.error;
        run.tokenUsage = copy(end.tokenUsage);
        run.cost = copy(end.cost);
        run.finishedAt = end.finishedAt;
        run.encryptedEnvVars = null;
      }
      run.revision += 1;
      return true;
    },
    async listOrphanedStepRuns(limit) {
      return stepRuns
        .pendingStepRuns()
        .filter((stepRun) => {
          const status = runs.get(stepRun.workflowRunId)?.status;
          return status !== undefined && status !== "pending";
        })
        .sort((a, b) => newestFirst(b, a))
        .slice(0, limit)
        .map((stepRun) => stepRun.id);
    },
  };
}
