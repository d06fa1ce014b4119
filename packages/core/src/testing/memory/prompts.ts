import type {
  PromptListPage,
  PromptRecord,
  PromptStore,
  PromptVersionRecord,
  TagHistoryRecord,
  VersionSelector,
  WebhookDeliveryRecord,
} from "../../ports.ts";
import { copy, decodeCursor, isNumber, isString, paginate } from "./paging.ts";
import { type MemoryReferences, requireReference } from "./references.ts";

export interface MemoryPromptStore extends PromptStore {
  hasVersion(id: string): boolean;
  /** The `provider:model` of a version, for usage by model. */
  modelOf(id: string): string | null;
}

/** The `q` and `tag` filters of PromptStore.listPrompts. */
const matchesListPage = (prompt: PromptRecord, page: PromptListPage): boolean => {
  if (page.tag && prompt.tags[page.tag] === undefined) return false;
  if (!page.q) return true;
  const needle = page.q.toLowerCase();
  return (
    prompt.slug.toLowerCase().includes(needle) || (prompt.description ?? "").toLowerCase().includes(needle)
  );
};

/** The webhook outbox of the memory store: `check` throws what `insert` would, writing nothing. */
export interface MemoryOutbox {
  check(rows: WebhookDeliveryRecord[]): void;
  insert(rows: WebhookDeliveryRecord[]): void;
}

export function createMemoryPromptStore(
  references: MemoryReferences,
  outbox: MemoryOutbox,
): MemoryPromptStore {
  /** key: `${tenantId}/${slug}` */
  const prompts = new Map<string, PromptRecord>();
  const versions = new Map<string, PromptVersionRecord>();
  const promptKey = (tenantId: string, slug: string) => `${tenantId}/${slug}`;

  const versionsOf = (prompt: PromptRecord): PromptVersionRecord[] =>
    [...versions.values()].filter((version) => version.promptId === prompt.id);

  const find = (prompt: PromptRecord, selector: VersionSelector): PromptVersionRecord | undefined => {
    const candidates = versionsOf(prompt);
    switch (selector.kind) {
      case "id":
        return candidates.find((version) => version.id === selector.id);
      case "number":
        return candidates.find((version) => version.version === selector.version);
      case "latest":
        return candidates.find((version) => version.version === prompt.latestVersion);
      case "tag": {
        const number = prompt.tags[selector.tag];
        return number === undefined ? undefined : candidates.find((version) => version.version === number);
      }
    }
  };

  /** Tag moves, oldest first, each with its sequence number (the cursor). */
  const history: Array<TagHistoryRecord & { seq: number; promptId: string; tag: string }> = [];
  /** Points (or, with null, removes) a tag and records the move when the version changes. */
  const moveTagOf = (
    prompt: PromptRecord,
    tag: string,
    version: number | null,
    at: Date,
    movedBy: string,
  ) => {
    const previousVersion = prompt.tags[tag] ?? null;
    if (previousVersion === version) return;
    if (version === null) delete prompt.tags[tag];
    else prompt.tags[tag] = version;
    prompt.updatedAt = at;
    history.push({
      seq: history.length + 1,
      promptId: prompt.id,
      tag,
      version,
      previousVersion,
      movedAt: at,
      movedBy,
    });
  };

  const tagsOf = (version: PromptVersionRecord): string[] => {
    const prompt = prompts.get(promptKey(version.tenantId, version.slug));
    if (!prompt) return [];
    return Object.entries(prompt.tags)
      .filter(([, number]) => number === version.version)
      .map(([tag]) => tag)
      .sort();
  };

  return {
    hasVersion: (id) => versions.has(id),
    modelOf: (id) => versions.get(id)?.definition.model ?? null,
    // Checks the outbox rows before changing anything: a push is all or nothing, like a transaction.
    async pushVersion(input) {
      requireReference(references.tenant(input.tenantId), `prompt ${input.slug}`);
      const key = promptKey(input.tenantId, input.slug);
      const existing = prompts.get(key);
      const prompt: PromptRecord = existing ?? {
        id: input.newPromptId,
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
      const version: PromptVersionRecord =
        latest && !created
          ? latest
          : {
              id: input.newVersionId,
              promptId: prompt.id,
              tenantId: input.tenantId,
              slug: input.slug,
              version: prompt.latestVersion + 1,
              definition: copy(input.definition),
              contentHash: input.contentHash,
              createdAt: input.at,
            };
      const rows = input.outbox?.({ version: copy(version), created }) ?? [];
      outbox.check(rows);
      if (!existing) prompts.set(key, prompt);
      if (created) {
        versions.set(version.id, version);
        prompt.latestVersion = version.version;
        prompt.description = input.definition.description ?? null;
        prompt.updatedAt = input.at;
      }
      for (const tag of input.tags) moveTagOf(prompt, tag, version.version, input.at, input.movedBy ?? "cli");
      outbox.insert(rows);
      return { version: copy(version), created, tags: tagsOf(version) };
    },
    async setTag(tenantId, slug, selector, tag, at, movedBy = "cli", write = undefined) {
      const prompt = prompts.get(promptKey(tenantId, slug));
      const version = prompt ? find(prompt, selector) : undefined;
      if (!prompt || !version) return null;
      const rows = write?.(copy(version)) ?? [];
      outbox.check(rows);
      moveTagOf(prompt, tag, version.version, at, movedBy);
      prompt.updatedAt = at;
      outbox.insert(rows);
      return copy(version);
    },
    async moveTag(input) {
      const prompt = prompts.get(promptKey(input.tenantId, input.slug));
      const version = prompt ? find(prompt, { kind: "number", version: input.version }) : undefined;
      if (!prompt || !version) return { outcome: "missing" };
      const current = prompt.tags[input.tag] ?? null;
      if (input.expectedVersion !== undefined && input.expectedVersion !== current)
        return { outcome: "conflict", current };
      const rows = input.outbox?.({ version: copy(version), previousVersion: current }) ?? [];
      outbox.check(rows);
      moveTagOf(prompt, input.tag, version.version, input.at, input.movedBy);
      prompt.updatedAt = input.at;
      outbox.insert(rows);
      return { outcome: "moved", version: copy(version), previousVersion: current };
    },
    async deleteTag(tenantId, slug, tag, at, movedBy) {
      const prompt = prompts.get(promptKey(tenantId, slug));
      const current = prompt?.tags[tag];
      if (!prompt || current === undefined) return null;
      moveTagOf(prompt, tag, null, at, movedBy);
      return current;
    },
    async listTagHistory(tenantId, slug, tag, page) {
      if (page.cursor) decodeCursor(page.cursor, isNumber);
      const prompt = prompts.get(promptKey(tenantId, slug));
      if (!prompt) return { items: [], nextCursor: null };
      const moves = history.filter((move) => move.promptId === prompt.id && move.tag === tag).reverse();
      const result = paginate(
        moves,
        page,
        (move) => move.seq,
        (move, seq) => move.seq < seq,
        isNumber,
      );
      const items = result.items.map(({ version, previousVersion, movedAt, movedBy }) =>
        copy({ version, previousVersion, movedAt, movedBy }),
      );
      return { items, nextCursor: result.nextCursor };
    },
    async resolveVersion(tenantId, slug, selector) {
      const prompt = prompts.get(promptKey(tenantId, slug));
      const version = prompt ? find(prompt, selector) : undefined;
      return version ? copy(version) : null;
    },
    async getPrompt(tenantId, slug) {
      const prompt = prompts.get(promptKey(tenantId, slug));
      return prompt ? copy(prompt) : null;
    },
    async listPrompts(tenantId, page) {
      const sorted = [...prompts.values()]
        .filter((prompt) => prompt.tenantId === tenantId && matchesListPage(prompt, page))
        .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
      const result = paginate(
        sorted,
        page,
        (prompt) => prompt.slug,
        (prompt, slug) => prompt.slug > slug,
        isString,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async listVersions(tenantId, slug, page) {
      // A malformed cursor is refused even when the prompt does not exist.
      if (page.cursor) decodeCursor(page.cursor, isNumber);
      const prompt = prompts.get(promptKey(tenantId, slug));
      if (!prompt) return { items: [], nextCursor: null };
      // Newest first.
      const sorted = versionsOf(prompt).sort((a, b) => b.version - a.version);
      const result = paginate(
        sorted,
        page,
        (version) => version.version,
        (version, number) => version.version < number,
        isNumber,
      );
      return { items: result.items.map(copy), nextCursor: result.nextCursor };
    },
    async tagsOf(versionId) {
      const version = versions.get(versionId);
      return version ? tagsOf(version) : [];
    },
    async countVersions(tenantId) {
      return [...versions.values()].filter((version) => version.tenantId === tenantId).length;
    },
  };
}
