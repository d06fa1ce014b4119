/** Records and helpers for the knowledge conformance suite. */
import type { Metadata } from "@promptrun/contract";
import type {
  ChunkRecord,
  DocumentOutbox,
  DocumentRecord,
  KnowledgeBaseRecord,
  NewDocument,
  Store,
  WebhookDeliveryRecord,
} from "@promptrun/core";
import { at } from "@promptrun/core/testing";

/** What a store keeps at rest that the port does not show (SQL stores only). */
export interface KnowledgeAtRest {
  /** Rows of every knowledge table (SQLite: the FTS5 index's own rows too). */
  rows: Record<string, number>;
  /** Documents still holding their upload. */
  contents: number;
}

export const knowledgeBase = (tenantId: string, slug: string, createdAt = at(0)): KnowledgeBaseRecord => ({
  id: Bun.randomUUIDv7(),
  tenantId,
  slug,
  description: `the ${slug} docs`,
  embeddingModel: "dev:hash",
  chunking: { maxTokens: 512, overlap: 64 },
  createdAt,
});

export const newDocument = (
  base: KnowledgeBaseRecord,
  overrides: Partial<NewDocument> = {},
): NewDocument => ({
  id: Bun.randomUUIDv7(),
  tenantId: base.tenantId,
  knowledgeBaseId: base.id,
  knowledgeBaseSlug: base.slug,
  externalId: null,
  filename: "guide.md",
  mediaType: "text/markdown",
  metadata: {},
  bytes: 11,
  createdAt: at(1),
  content: new TextEncoder().encode("hello world"),
  ...overrides,
});

/** A unit vector of 4 dimensions pointing mostly along `axis`. */
export const unitVector = (axis: number): Float32Array => {
  const vector = new Float32Array([0.1, 0.1, 0.1, 0.1]);
  vector[axis % 4] = 0.9;
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
};

export const chunksOf = (texts: string[]): ChunkRecord[] =>
  texts.map((text, ordinal) => ({
    id: Bun.randomUUIDv7(),
    documentId: "",
    ordinal,
    text,
    tokens: text.split(" ").length,
    embedding: unitVector(ordinal),
  }));

/** An outbox writing one `document.ready`/`document.failed` event to `webhookId`, recording what it was given. */
export const outboxTo = (webhookId: () => string | null, eventId = Bun.randomUUIDv7()) => {
  const seen: DocumentRecord[] = [];
  const build: DocumentOutbox = (document): WebhookDeliveryRecord[] => {
    seen.push(document);
    const target = webhookId();
    if (target === null) return [];
    const eventType = document.status === "ready" ? "document.ready" : "document.failed";
    return [
      {
        id: Bun.randomUUIDv7(),
        webhookId: target,
        tenantId: document.tenantId,
        runId: null,
        eventId,
        eventType,
        payload: JSON.stringify({ type: eventType, data: { id: document.id, status: document.status } }),
        status: "pending",
        attempts: 0,
        nextAttemptAt: at(2),
        createdAt: at(2),
      },
    ];
  };
  return { build, seen, eventId };
};

const OWNER = "instance-a";

/**
 * Adds a document and ingests it (claim, complete) with chunks of these texts; the store must
 * have no other document waiting.
 */
export const addReady = async (
  store: Store,
  base: KnowledgeBaseRecord,
  texts: string[],
  overrides: Partial<NewDocument> & { metadata?: Metadata } = {},
): Promise<{ document: DocumentRecord; chunks: ChunkRecord[] }> => {
  const document = newDocument(base, overrides);
  await store.knowledge.addDocument(document);
  const claimed = await store.knowledge.claimDocument(OWNER, at(100), at(2));
  if (claimed?.document.id !== document.id) throw new Error("another document was waiting");
  const chunks = chunksOf(texts).map((chunk) => ({ ...chunk, documentId: document.id }));
  const ready = await store.knowledge.completeDocument(document.id, OWNER, {
    chunks,
    tokens: chunks.reduce((sum, chunk) => sum + chunk.tokens, 0),
    cost: { total: 0, priced: true },
    readyAt: at(3),
    outbox: () => [],
  });
  if (!ready) throw new Error("complete refused");
  return { document: ready, chunks };
};
