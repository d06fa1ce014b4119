/**
 * Test support only: a KnowledgeService that keeps knowledge bases and documents in maps per
 * tenant, records every call and answers with contract-shaped values. The transports are tested
 * against it; the real service is tested end to end (docs/KNOWLEDGE.md).
 */
import {
  createKnowledgeBaseRequestSchema,
  type KnowledgeBase,
  type KnowledgeDocument,
  searchRequestSchema,
} from "@promptrun/contract";
import {
  type DocumentUpload,
  formatValidationError,
  invalid,
  type KnowledgeService,
  notFound,
  PromptrunError,
  uuidv7,
} from "@promptrun/core";

export interface RecordedCall {
  method: keyof KnowledgeService;
  tenantId: string;
  args: unknown[];
}

export interface FakeKnowledgeService extends KnowledgeService {
  calls: RecordedCall[];
  /** The uploads addDocument received, in order. */
  uploads: DocumentUpload[];
  /** Sets a document's status (as ingestion would). */
  setStatus(id: string, status: KnowledgeDocument["status"], error?: string): void;
}

interface Tenancy {
  bases: Map<string, KnowledgeBase>;
  documents: Map<string, KnowledgeDocument>;
}

function pageOf<T>(items: T[], cursor: string | null | undefined, limit: number) {
  const start = cursor ? Number(cursor) : 0;
  const slice = items.slice(start, start + limit);
  const next = start + limit < items.length ? String(start + limit) : null;
  return { items: slice, nextCursor: next };
}

export function createFakeKnowledgeService(): FakeKnowledgeService {
  const tenants = new Map<string, Tenancy>();
  const calls: RecordedCall[] = [];
  const uploads: DocumentUpload[] = [];
  const tenancy = (tenantId: string): Tenancy => {
    const found = tenants.get(tenantId) ?? { bases: new Map(), documents: new Map() };
    tenants.set(tenantId, found);
    return found;
  };
  const record = (method: keyof KnowledgeService, tenantId: string, ...args: unknown[]) =>
    calls.push({ method, tenantId, args });
  const base = (tenantId: string, slug: string): KnowledgeBase => {
    const found = tenancy(tenantId).bases.get(slug);
    if (!found) throw notFound(`knowledge base '${slug}' not found`);
    return found;
  };
  const document = (tenantId: string, slug: string, id: string): KnowledgeDocument => {
    base(tenantId, slug);
    const found = tenancy(tenantId).documents.get(id);
    if (!found || found.knowledgeBase !== slug) throw notFound("document not found");
    return found;
  };
  return {
    calls,
    uploads,
    setStatus(id, status, error) {
      for (const { documents } of tenants.values()) {
        const found = documents.get(id);
        if (found) documents.set(id, { ...found, status, error: error ?? null });
      }
    },
    async create(tenantId, body) {
      record("create", tenantId, body);
      const parsed = createKnowledgeBaseRequestSchema.safeParse(body);
      if (!parsed.success) throw invalid(formatValidationError(parsed.error));
      const { slug, description, embeddingModel, chunking } = parsed.data;
      if (tenancy(tenantId).bases.has(slug)) throw new PromptrunError("conflict", `'${slug}' is taken`);
      const created: KnowledgeBase = {
        id: uuidv7(),
        slug,
        description: description ?? null,
        embeddingModel: embeddingModel ?? "dev:hash",
        chunking: chunking ?? { maxTokens: 512, overlap: 64 },
        documentCount: 0,
        chunkCount: 0,
        bytes: 0,
        createdAt: new Date().toISOString(),
      };
      tenancy(tenantId).bases.set(slug, created);
      return created;
    },
    async list(tenantId, page) {
      record("list", tenantId, page);
      return pageOf([...tenancy(tenantId).bases.values()], page.cursor, page.limit);
    },
    async get(tenantId, slug) {
      record("get", tenantId, slug);
      return base(tenantId, slug);
    },
    async delete(tenantId, slug) {
      record("delete", tenantId, slug);
      base(tenantId, slug);
      tenancy(tenantId).bases.delete(slug);
    },
    async addDocument(tenantId, slug, upload) {
      record("addDocument", tenantId, slug, upload);
      base(tenantId, slug);
      uploads.push(upload);
      if (typeof upload.filename !== "string") throw invalid("filename is required");
      const id = uuidv7();
      tenancy(tenantId).documents.set(id, {
        id,
        knowledgeBase: slug,
        externalId: typeof upload.externalId === "string" ? upload.externalId : null,
        filename: upload.filename,
        mediaType: "text/plain",
        metadata: (upload.metadata ?? {}) as KnowledgeDocument["metadata"],
        status: "pending",
        error: null,
        bytes: upload.content.byteLength,
        chunkCount: 0,
        tokens: 0,
        cost: null,
        createdAt: new Date().toISOString(),
        readyAt: null,
      });
      return { id, status: "pending" };
    },
    async listDocuments(tenantId, slug, page) {
      record("listDocuments", tenantId, slug, page);
      base(tenantId, slug);
      const all = [...tenancy(tenantId).documents.values()].filter(
        (doc) => doc.knowledgeBase === slug && (page.status === undefined || doc.status === page.status),
      );
      return pageOf(all, page.cursor, page.limit);
    },
    async getDocument(tenantId, slug, id) {
      record("getDocument", tenantId, slug, id);
      return document(tenantId, slug, id);
    },
    async deleteDocument(tenantId, slug, id) {
      record("deleteDocument", tenantId, slug, id);
      document(tenantId, slug, id);
      tenancy(tenantId).documents.delete(id);
    },
    async search(tenantId, slug, body) {
      record("search", tenantId, slug, body);
      base(tenantId, slug);
      const parsed = searchRequestSchema.safeParse(body);
      if (!parsed.success) throw invalid(formatValidationError(parsed.error));
      const hits = [...tenancy(tenantId).documents.values()].filter((doc) => doc.knowledgeBase === slug);
      return {
        items: hits.slice(0, parsed.data.topK).map((doc, index) => ({
          chunkId: uuidv7(),
          documentId: doc.id,
          filename: doc.filename,
          text: `chunk for ${parsed.data.query}`,
          score: 1 / (index + 1),
          metadata: doc.metadata,
        })),
      };
    },
  };
}
