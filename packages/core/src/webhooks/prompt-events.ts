import type { PromptRecord, Store } from "../ports.ts";
import type { PromptWebhookEvent } from "./build-prompt-deliveries.ts";
import { buildPromptDeliveries } from "./build-prompt-deliveries.ts";

/** The tags of `slug` before a write (tag → version number; empty for a new prompt). */
export const tagsBefore = async (store: Pick<Store, "prompts">, tenantId: string, slug: string) =>
  ((await store.prompts.getPrompt(tenantId, slug)) as PromptRecord | null)?.tags ?? {};

/** prompt.tag.moved for each of `tags` now on `version` that pointed elsewhere (or nowhere) before. */
export const tagMoves = (
  slug: string,
  before: Record<string, number>,
  tags: string[],
  version: number,
): PromptWebhookEvent[] =>
  tags
    .filter((tag) => before[tag] !== version)
    .map((tag) => ({
      type: "prompt.tag.moved",
      data: { slug, tag, version, previousVersion: before[tag] ?? null },
    }));

/**
 * Writes the outbox rows of prompt events. The prompt store's writes take no outbox, so this runs
 * right after the version/tag write (docs/PRODUCT-RULES.md "Environments, env vars and webhooks"):
 * an event is enqueued once, after its write succeeded.
 */
export const enqueuePromptEvents = async (
  dependencies: { store: Pick<Store, "webhooks">; clock: { now(): Date }; newId: () => string },
  tenantId: string,
  events: PromptWebhookEvent[],
): Promise<void> => {
  const deliveries = await buildPromptDeliveries(dependencies, tenantId, events);
  if (deliveries.length > 0) await dependencies.store.webhooks.enqueueDeliveries(deliveries);
};
