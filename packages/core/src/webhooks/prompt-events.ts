import type { PromptRecord, Store, WebhookDeliveryRecord } from "../ports.ts";
import type { PromptWebhookEvent } from "./build-tenant-deliveries.ts";
import { tenantEventDeliveryBuilder } from "./build-tenant-deliveries.ts";

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

/** Prompt events with no receiver add no rows; a write that emits nothing adds none either. */
export type PromptEventRows = (events: PromptWebhookEvent[]) => WebhookDeliveryRecord[];

/**
 * The builder of a prompt write's outbox rows (docs/PRODUCT-RULES.md "Environments, env vars and
 * webhooks"): the service hands it to the prompt store, which writes its rows in the write's
 * transaction, so an event exists exactly when its write committed.
 */
export const promptEventRows = (
  dependencies: { store: Pick<Store, "webhooks">; clock: { now(): Date }; newId: () => string },
  tenantId: string,
): Promise<PromptEventRows> => tenantEventDeliveryBuilder(dependencies, tenantId);
