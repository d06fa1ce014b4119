import {
  chunkingSchema,
  createKnowledgeBaseRequestSchema,
  type DocumentMediaType,
  documentFilenameSchema,
  externalIdSchema,
  type Metadata,
  metadataSchema,
  SEARCH_TOP_K_MAX,
  searchRequestSchema,
  uuidSchema,
} from "@promptrun/contract";
import type { z } from "zod";
import type { PromptrunConfig } from "../config.ts";
import { conflict, invalid, notFound, PromptrunError } from "../errors.ts";
import type { Clock } from "../ports.ts";
import { formatPath, formatValidationError } from "../services/format-validation-error.ts";
import { clampPage } from "../services/page.ts";
import { uuidv7 } from "../services/uuidv7.ts";
import type { DocumentUpload, KnowledgeService, RateLimitService } from "../services.ts";
import {
  EmbeddingError,
  type KnowledgeBaseRecord,
  type KnowledgeSearch,
  type KnowledgeStore,
} from "./ports.ts";
import { toDocument } from "./to-document.ts";
import { toKnowledgeBase } from "./to-knowledge-base.ts";

/** Bytes of an upload's start handed to the media type detector (magic numbers, a DOCX's zip entries). */
export const MEDIA_TYPE_HEAD_BYTES = 64 * 1024;

/**
 * The media type of an upload from its name, its declared type and its first bytes: null (or a
 * PromptrunError unsupported_media_type thrown) when it is not a supported type or its content is
 * not what its name or declared type says.
 */
export type MediaTypeDetector = (upload: {
  filename: string;
  declared: string | undefined;
  head: Uint8Array;
  /** The type when neither the declared type nor the extension tells (JSON text uploads: text/plain). */
  fallback?: DocumentMediaType | undefined;
}) => DocumentMediaType | null | Promise<DocumentMediaType | null>;

export interface KnowledgeServiceDependencies {
  store: KnowledgeStore;
  config: Pick<PromptrunConfig, "knowledge">;
  clock: Clock;
  search: KnowledgeSearch;
  /** Checks that `provider:model` can embed here (known provider, credentials); throws EmbeddingError or PromptrunError. */
  validateEmbeddingModel: (ref: string) => void | Promise<void>;
  detectMediaType: MediaTypeDetector;
  /** A document was queued: the ingestion worker claims it now instead of at its next poll. */
  onDocumentAdded?: () => void;
  /** A knowledge base was deleted: its vector matrix is dropped here at once (KnowledgeSearchEngine.forget). */
  onKnowledgeBaseDeleted?: (knowledgeBaseId: string) => void;
  newId?: () => string;
  /** Uploads and searches take from the tenant's buckets (embedding costs the server's provider keys). */
  rateLimits?: Pick<RateLimitService, "take">;
}

const parse = <S extends z.ZodType>(schema: S, value: unknown, subject: string): z.output<S> => {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error, subject));
  return parsed.data;
};

/** A field of an upload checked against its schema, the message naming the field. */
const field = <S extends z.ZodType>(schema: S, value: unknown, name: string): z.output<S> => {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const messages = parsed.error.issues.map(
    (issue) => `${formatPath([name, ...issue.path])}: ${issue.message.replace(/^Invalid input: /, "")}`,
  );
  throw invalid(messages.join("; "));
};

/** Multipart sends metadata as a JSON string; JSON bodies and tRPC as an object. */
function parseMetadata(value: unknown): Metadata {
  if (value === undefined || value === null || value === "") return {};
  let object = value;
  if (typeof value === "string") {
    try {
      object = JSON.parse(value);
    } catch {
      throw invalid('metadata must be a JSON object, e.g. {"team": "support"}');
    }
  }
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    throw invalid('metadata must be a JSON object, e.g. {"team": "support"}');
  }
  return field(metadataSchema, object, "metadata");
}

function parseSearchBody(body: unknown) {
  const parsed = searchRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const topK = parsed.error.issues.find((issue) => issue.path[0] === "topK");
  if (topK) {
    throw invalid(`topK must be a whole number from 1 to ${SEARCH_TOP_K_MAX}; ask for fewer chunks`);
  }
  throw invalid(formatValidationError(parsed.error, "search request"));
}

/**
 * Knowledge bases and their documents for one tenant at a time (docs/KNOWLEDGE.md "Knowledge
 * bases and documents"): bodies are checked here against the contract; another tenant's
 * knowledge base or document is not_found.
 */
export function createKnowledgeService(dependencies: KnowledgeServiceDependencies): KnowledgeService {
  const { store, config, clock, search } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7());

  const baseOf = async (tenantId: string, slug: string) => {
    const base = await store.getKnowledgeBase(tenantId, slug);
    if (!base) throw notFound(`knowledge base '${slug}' not found`);
    return base;
  };
  const documentOf = async (tenantId: string, slug: string, id: string) => {
    const base = await baseOf(tenantId, slug);
    const document = uuidSchema.safeParse(id).success ? await store.getDocument(tenantId, base.id, id) : null;
    if (!document) throw notFound(`document '${id}' not found in knowledge base '${slug}'`);
    return document;
  };

  const checkEmbeddingModel = async (ref: string) => {
    try {
      await dependencies.validateEmbeddingModel(ref);
    } catch (error) {
      if (error instanceof EmbeddingError) throw invalid(`embeddingModel: ${error.message}`);
      throw error;
    }
  };

  return {
    async create(tenantId, body) {
      const request = parse(createKnowledgeBaseRequestSchema, body, "request body");
      const embeddingModel = request.embeddingModel ?? config.knowledge.defaultEmbeddingModel;
      await checkEmbeddingModel(embeddingModel);
      const record: KnowledgeBaseRecord = {
        id: newId(),
        tenantId,
        slug: request.slug,
        description: request.description ?? null,
        embeddingModel,
        chunking: request.chunking ?? chunkingSchema.parse({}),
        createdAt: clock.now(),
      };
      try {
        await store.createKnowledgeBase(record);
      } catch (error) {
        if (PromptrunError.isInstance(error) && error.code === "conflict") {
          throw conflict(
            `knowledge base '${request.slug}' already exists; choose another slug or delete it first`,
          );
        }
        throw error;
      }
      return toKnowledgeBase({ ...record, documentCount: 0, chunkCount: 0, bytes: 0 });
    },
    async list(tenantId, page) {
      const result = await store.listKnowledgeBases(tenantId, clampPage(page));
      return { items: result.items.map(toKnowledgeBase), nextCursor: result.nextCursor };
    },
    async get(tenantId, slug) {
      return toKnowledgeBase(await baseOf(tenantId, slug));
    },
    async delete(tenantId, slug) {
      const base = await baseOf(tenantId, slug);
      if (!(await store.deleteKnowledgeBase(tenantId, slug)))
        throw notFound(`knowledge base '${slug}' not found`);
      dependencies.onKnowledgeBaseDeleted?.(base.id);
    },
    async addDocument(tenantId, slug, upload) {
      const base = await baseOf(tenantId, slug);
      const checked = await checkUpload(
        upload,
        config.knowledge.maxUploadBytes,
        dependencies.detectMediaType,
      );
      await dependencies.rateLimits?.take(tenantId, "knowledge.documents");
      const id = newId();
      await store.addDocument({
        id,
        tenantId,
        knowledgeBaseId: base.id,
        knowledgeBaseSlug: base.slug,
        ...checked,
        bytes: upload.content.byteLength,
        createdAt: clock.now(),
        content: upload.content,
      });
      dependencies.onDocumentAdded?.();
      return { id, status: "pending" };
    },
    async listDocuments(tenantId, slug, page) {
      const base = await baseOf(tenantId, slug);
      const result = await store.listDocuments(tenantId, base.id, {
        ...clampPage(page),
        status: page.status,
      });
      return { items: result.items.map(toDocument), nextCursor: result.nextCursor };
    },
    async getDocument(tenantId, slug, id) {
      return toDocument(await documentOf(tenantId, slug, id));
    },
    async deleteDocument(tenantId, slug, id) {
      const document = await documentOf(tenantId, slug, id);
      if (!(await store.deleteDocument(tenantId, document.knowledgeBaseId, id))) {
        throw notFound(`document '${id}' not found in knowledge base '${slug}'`);
      }
    },
    async search(tenantId, slug, body) {
      const request = parseSearchBody(body);
      await dependencies.rateLimits?.take(tenantId, "knowledge.search");
      const outcome = await search.search(tenantId, slug, request);
      return { items: outcome.hits };
    },
  };
}

/**
 * The declared type as the detector gets it: lower-cased, without parameters (`; charset=…`);
 * absent when empty or `application/octet-stream` (what clients send for "unknown").
 */
export function declaredType(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const type = (value.split(";")[0] ?? "").trim().toLowerCase();
  return type === "" || type === "application/octet-stream" ? undefined : type;
}

/** docs/KNOWLEDGE.md "Knowledge bases and documents": size (413), emptiness and fields (400), type (415). */
async function checkUpload(upload: DocumentUpload, maxBytes: number, detectMediaType: MediaTypeDetector) {
  const size = upload.content.byteLength;
  if (size > maxBytes) {
    throw new PromptrunError(
      "payload_too_large",
      `the document is ${size} bytes, more than the limit of ${maxBytes} bytes (PROMPTRUN_MAX_UPLOAD_BYTES); split it into smaller files`,
    );
  }
  if (size === 0) throw invalid("the document is empty; upload a file with content");
  const filename = field(documentFilenameSchema, upload.filename, "filename");
  const metadata = parseMetadata(upload.metadata);
  const externalId =
    upload.externalId === undefined || upload.externalId === null
      ? null
      : field(externalIdSchema, upload.externalId, "externalId");
  if (upload.mediaType !== undefined && upload.mediaType !== null && typeof upload.mediaType !== "string") {
    throw invalid("mediaType must be a string such as text/markdown");
  }
  const declared = declaredType(upload.mediaType);
  const mediaType = await detectMediaType({
    filename,
    declared,
    head: upload.content.subarray(0, MEDIA_TYPE_HEAD_BYTES),
    ...(upload.text === true ? { fallback: "text/plain" as const } : {}),
  });
  if (mediaType === null) {
    throw new PromptrunError(
      "unsupported_media_type",
      `'${filename}' is not a supported document type${declared ? ` (declared ${declared})` : ""}; upload text, Markdown, HTML, PDF or DOCX`,
    );
  }
  return { filename, metadata, externalId, mediaType };
}
