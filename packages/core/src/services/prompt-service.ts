import { type PromptDefinition, type PromptFile, promptFileSchema, tagSchema } from "@promptrun/contract";
import { DEFAULT_TENANT_QUOTAS, type TenantQuotas } from "../config.ts";
import { conflict, invalid, notFound, PromptrunError } from "../errors.ts";
import { assertKnownModel, type ProviderConfig } from "../models/known-providers.ts";
import type { Clock, PromptVersionRecord, Store, VersionSelector } from "../ports.ts";
import { checkPromptDefinition } from "../prompt-checks/check-prompt-definition.ts";
import type { PromptService } from "../services.ts";
import { validateInputs } from "../templating/template.ts";
import type { PromptWebhookEvent } from "../webhooks/build-tenant-deliveries.ts";
import { type PromptEventRows, promptEventRows, tagMoves, tagsBefore } from "../webhooks/prompt-events.ts";
import { canonicalHash } from "./canonical-json.ts";
import { formatValidationError } from "./format-validation-error.ts";
import { boundedPage, clampPage } from "./page.ts";
import { describeMissingVersion, parseVersionSegment } from "./parse-version-segment.ts";
import { describeTagConflict, parseTagRequest, requireTag } from "./tag-move.ts";
import { createQuotaGuard } from "./tenant-quota.ts";
import { tagsForVersion, toPromptSummary, toPromptVersion } from "./to-prompt-version.ts";
import { uuidv7 } from "./uuidv7.ts";

export interface PromptServiceDependencies {
  store: Store;
  clock: Clock;
  /** Which providers the server knows: a prompt naming another is rejected at push. */
  providers: ProviderConfig;
  newId?: () => string;
  quotas?: Pick<TenantQuotas, "promptVersions">;
  /** Called after prompt webhook events were enqueued (wakes the dispatcher). */
  onEnqueue?: () => void;
}

const labelOf = (file: unknown, index: number): string =>
  typeof file === "object" && file !== null && "slug" in file && typeof file.slug === "string"
    ? file.slug
    : `#${index + 1}`;

/** Re-throws a PromptrunError with the prompt it concerns named first. */
const inPrompt = <T>(slug: string, check: () => T): T => {
  try {
    return check();
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw invalid(`prompt '${slug}': ${error.message}`);
    throw error;
  }
};

/** Schema, templates and input defaults of one file; every message names the prompt and field. */
function parsePromptFile(file: unknown, index: number, providers: ProviderConfig): PromptFile {
  const result = promptFileSchema.safeParse(file);
  if (!result.success)
    throw invalid(`prompt '${labelOf(file, index)}': ${formatValidationError(result.error, "prompt file")}`);
  const prompt = result.data;
  inPrompt(prompt.slug, () => checkPromptDefinition(prompt, providers));
  inPrompt(prompt.slug, () => assertKnownModel(prompt.model, providers));
  for (const [name, declaration] of Object.entries(prompt.inputs)) {
    if (declaration.default === undefined) continue;
    const withoutDefault = { type: declaration.type };
    try {
      validateInputs({ [name]: withoutDefault }, { [name]: declaration.default });
    } catch (error) {
      if (!PromptrunError.isInstance(error)) throw error;
      throw invalid(`prompt '${prompt.slug}': default of ${error.message}`);
    }
  }
  return prompt;
}

export function createPromptService(dependencies: PromptServiceDependencies): PromptService {
  const { store, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7(clock.now().getTime()));
  const versionQuota = createQuotaGuard(
    "promptVersions",
    (dependencies.quotas ?? DEFAULT_TENANT_QUOTAS).promptVersions,
  );

  /** How many of these prompts differ from their newest version (each would add one version). */
  const countNewVersions = async (tenantId: string, hashes: Array<{ slug: string; contentHash: string }>) => {
    let adding = 0;
    for (const { slug, contentHash } of hashes) {
      const latest = await store.prompts.resolveVersion(tenantId, slug, { kind: "latest" });
      if (latest?.contentHash !== contentHash) adding += 1;
    }
    return adding;
  };

  /**
   * The outbox of one prompt write (see webhooks/prompt-events.ts): the store writes the rows of
   * `events(written)` in the write's transaction; `wake` then tells the dispatcher, after commit.
   */
  const outboxOf = async (tenantId: string) => {
    const rows: PromptEventRows = await promptEventRows({ store, clock, newId }, tenantId);
    let written = 0;
    return {
      write:
        <Written>(events: (written: Written) => PromptWebhookEvent[]) =>
        (result: Written) => {
          const built = rows(events(result));
          written += built.length;
          return built;
        },
      wake: () => {
        if (written > 0) dependencies.onEnqueue?.();
      },
    };
  };

  const missing = async (tenantId: string, slug: string, selector: VersionSelector) => {
    const prompt = await store.prompts.getPrompt(tenantId, slug);
    return notFound(prompt ? describeMissingVersion(slug, selector) : `prompt '${slug}' not found`);
  };

  return {
    async push(tenantId, files, movedBy = "cli") {
      if (files.length === 0) throw invalid("no prompt files to push");
      // Validate every file before pushing any, so a bad file leaves nothing half-pushed.
      const prompts = files.map((file, index) => parsePromptFile(file, index, dependencies.providers));
      const seen = new Set<string>();
      for (const prompt of prompts) {
        if (seen.has(prompt.slug))
          throw invalid(`prompt '${prompt.slug}' appears more than once in one push`);
        seen.add(prompt.slug);
      }
      if (!(await store.tenants.get(tenantId))) throw notFound(`tenant '${tenantId}' not found`);

      const hashed = prompts.map(({ slug, tags, ...definition }) => ({
        slug,
        tags,
        definition: definition satisfies PromptDefinition,
        contentHash: canonicalHash(definition),
      }));
      // The whole push fits the quota or nothing of it is written; an unchanged prompt adds nothing.
      return versionQuota.exclusive(tenantId, async () => {
        const adding = await countNewVersions(tenantId, hashed);
        if (adding > 0) versionQuota.assertRoom(await store.prompts.countVersions(tenantId), adding);
        const results = [];
        const outbox = await outboxOf(tenantId);
        for (const { slug, tags, definition, contentHash } of hashed) {
          const before = tags.length > 0 ? await tagsBefore(store, tenantId, slug) : {};
          const pushed = await store.prompts.pushVersion({
            tenantId,
            slug,
            definition,
            contentHash,
            tags,
            newPromptId: newId(),
            newVersionId: newId(),
            at: clock.now(),
            movedBy,
            outbox: outbox.write(({ version, created }) => [
              ...(created
                ? [
                    {
                      type: "prompt.version.created" as const,
                      data: { slug, version: version.version, id: version.id },
                    },
                  ]
                : []),
              ...tagMoves(slug, before, tags, version.version),
            ]),
          });
          results.push({
            slug,
            version: pushed.version.version,
            id: pushed.version.id,
            tags: pushed.tags,
            created: pushed.created,
          });
        }
        outbox.wake();
        return results;
      });
    },

    async tag(tenantId, slug, versionSegment, tag, movedBy = "cli") {
      const parsedTag = tagSchema.safeParse(tag);
      if (!parsedTag.success)
        throw invalid(`tag '${tag}': ${parsedTag.error.issues[0]?.message ?? "invalid"}`);
      const selector = parseVersionSegment(versionSegment);
      const before = await tagsBefore(store, tenantId, slug);
      const outbox = await outboxOf(tenantId);
      const version = await store.prompts.setTag(
        tenantId,
        slug,
        selector,
        parsedTag.data,
        clock.now(),
        movedBy,
        outbox.write((tagged: PromptVersionRecord) =>
          tagMoves(slug, before, [parsedTag.data], tagged.version),
        ),
      );
      if (!version) throw await missing(tenantId, slug, selector);
      outbox.wake();
      return {
        slug,
        version: version.version,
        id: version.id,
        tags: await store.prompts.tagsOf(version.id),
        created: false,
      };
    },

    async moveTag(tenantId, slug, tag, body, movedBy) {
      const parsedTag = requireTag(tag);
      const request = parseTagRequest(body);
      const outbox = await outboxOf(tenantId);
      const moved = await store.prompts.moveTag({
        tenantId,
        slug,
        tag: parsedTag,
        ...request,
        at: clock.now(),
        movedBy,
        outbox: outbox.write(({ version, previousVersion }) =>
          tagMoves(
            slug,
            previousVersion === null ? {} : { [parsedTag]: previousVersion },
            [parsedTag],
            version.version,
          ),
        ),
      });
      if (moved.outcome === "missing")
        throw await missing(tenantId, slug, { kind: "number", version: request.version });
      if (moved.outcome === "conflict") throw conflict(describeTagConflict(slug, parsedTag, moved.current));
      outbox.wake();
      const version = moved.version.version;
      return { slug, tag: parsedTag, version, previousVersion: moved.previousVersion };
    },

    async deleteTag(tenantId, slug, tag, movedBy) {
      const removed = await store.prompts.deleteTag(tenantId, slug, requireTag(tag), clock.now(), movedBy);
      if (removed === null) {
        const prompt = await store.prompts.getPrompt(tenantId, slug);
        throw notFound(prompt ? `tag '${tag}' of prompt '${slug}' not found` : `prompt '${slug}' not found`);
      }
      return removed;
    },

    async tagHistory(tenantId, slug, tag, page) {
      const parsedTag = requireTag(tag);
      const result = await store.prompts.listTagHistory(tenantId, slug, parsedTag, clampPage(page));
      if (result.items.length === 0 && !(await store.prompts.getPrompt(tenantId, slug)))
        throw notFound(`prompt '${slug}' not found`);
      return {
        items: result.items.map((move) => ({ ...move, movedAt: move.movedAt.toISOString() })),
        nextCursor: result.nextCursor,
      };
    },

    async get(tenantId, slug, versionSegment) {
      const selector = parseVersionSegment(versionSegment);
      const version = await store.prompts.resolveVersion(tenantId, slug, selector);
      if (!version) throw await missing(tenantId, slug, selector);
      return toPromptVersion(version, await store.prompts.tagsOf(version.id));
    },

    async list(tenantId, page) {
      const result = await store.prompts.listPrompts(tenantId, {
        ...clampPage(page),
        q: page.q ?? null,
        tag: page.tag ?? null,
      });
      return { items: result.items.map(toPromptSummary), nextCursor: result.nextCursor };
    },

    async summary(tenantId, slug) {
      const prompt = await store.prompts.getPrompt(tenantId, slug);
      if (!prompt) throw notFound(`prompt '${slug}' not found`);
      return toPromptSummary(prompt);
    },

    async versions(tenantId, slug, page) {
      const prompt = await store.prompts.getPrompt(tenantId, slug);
      if (!prompt) throw notFound(`prompt '${slug}' not found`);
      const { cursor, limit } = clampPage(page);
      return boundedPage(
        (pageLimit) => store.prompts.listVersions(tenantId, slug, { cursor, limit: pageLimit }),
        (version) => toPromptVersion(version, tagsForVersion(prompt, version.version)),
        limit,
      );
    },
  };
}
