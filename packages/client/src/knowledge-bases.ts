import {
  type CreateKnowledgeBaseRequest,
  type DocumentAccepted,
  type DocumentStatus,
  documentAcceptedSchema,
  type KnowledgeBase,
  type KnowledgeDocument,
  knowledgeBaseSchema,
  knowledgeDocumentSchema,
  type Metadata,
  type Page,
  pageOf,
  type SearchRequest,
  type SearchResponse,
  searchResponseSchema,
} from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { queryString } from "./client-request.ts";
import { delay } from "./delay.ts";
import type { RestRequester } from "./rest-request.ts";

/** Fields of a document besides its content. */
interface DocumentFields {
  /** A media type the server supports; absent: the file's type, else the filename's extension. */
  mediaType?: string;
  /** JSON metadata (the run metadata rules); search filters match it. */
  metadata?: Metadata;
  /** Your id: adding a document with the same externalId replaces that document. */
  externalId?: string;
}

/** A file, sent as multipart/form-data. `filename` is required when `file` is a Blob without a name. */
export type AddFileInput = DocumentFields & { file: Blob; filename?: string };
/** Text, sent as JSON; its type comes from `mediaType` or the filename's extension (else text/plain). */
export type AddTextInput = DocumentFields & { text: string; filename: string };
export type AddDocumentInput = AddFileInput | AddTextInput;

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ListDocumentsOptions extends CallOptions {
  status?: DocumentStatus;
  cursor?: string;
  limit?: number;
}

export interface WaitUntilReadyOptions extends CallOptions {
  /** Gives up with an ApiError of code `timeout` after this many milliseconds (default 120 000). */
  timeoutMs?: number;
  /** Milliseconds between polls (default 500). */
  intervalMs?: number;
}

/** A document whose ingestion failed (`document.error` says why); thrown by `waitUntilReady`. */
export class DocumentFailedError extends Error {
  readonly document: KnowledgeDocument;
  constructor(document: KnowledgeDocument) {
    super(`document ${document.id} (${document.filename}) failed: ${document.error ?? "unknown error"}`);
    this.name = "DocumentFailedError";
    this.document = document;
  }
}

/** The documents of one knowledge base. */
export interface DocumentsClient {
  /** Uploads a file (multipart) or text (JSON); ingestion runs in the background: `{id, status: "pending"}`. */
  add(input: AddDocumentInput, options?: CallOptions): Promise<DocumentAccepted>;
  list(options?: ListDocumentsOptions): Promise<Page<KnowledgeDocument>>;
  get(id: string, options?: CallOptions): Promise<KnowledgeDocument>;
  delete(id: string, options?: CallOptions): Promise<void>;
}

/** Knowledge bases (docs/KNOWLEDGE.md). Every call throws an ApiError on failure. */
export interface KnowledgeBasesClient {
  create(body: CreateKnowledgeBaseRequest, options?: CallOptions): Promise<KnowledgeBase>;
  list(page?: { cursor?: string; limit?: number } & CallOptions): Promise<Page<KnowledgeBase>>;
  get(slug: string, options?: CallOptions): Promise<KnowledgeBase>;
  /** Deletes it with its documents and chunks. */
  delete(slug: string, options?: CallOptions): Promise<void>;
  documents(slug: string): DocumentsClient;
  /**
   * Polls a document until it is `ready` and returns it; transient errors are retried. A `failed`
   * document throws a {@link DocumentFailedError}.
   */
  waitUntilReady(slug: string, id: string, options?: WaitUntilReadyOptions): Promise<KnowledgeDocument>;
  search(slug: string, request: SearchRequest, options?: CallOptions): Promise<SearchResponse>;
}

const basePath = (slug: string) => `/api/v1/knowledge-bases/${encodeURIComponent(slug)}`;
const knowledgeBasePage = pageOf(knowledgeBaseSchema);
const documentPage = pageOf(knowledgeDocumentSchema);

/** The multipart form of a file upload: `file` (with its name and type), `metadata` JSON, `externalId`. */
function uploadForm(input: AddFileInput): FormData {
  const filename = input.filename ?? (input.file instanceof File ? input.file.name : undefined);
  if (!filename) throw new TypeError("documents.add: a Blob needs a filename (pass `filename`)");
  const file = input.mediaType ? new Blob([input.file], { type: input.mediaType }) : input.file;
  const form = new FormData();
  form.append("file", file, filename);
  if (input.metadata !== undefined) form.append("metadata", JSON.stringify(input.metadata));
  if (input.externalId !== undefined) form.append("externalId", input.externalId);
  return form;
}

async function expectNoContent(response: Response): Promise<void> {
  if (!response.ok) throw await ApiError.fromResponse(response);
}

function documentsClient({ request, send }: RestRequester, slug: string): DocumentsClient {
  const path = `${basePath(slug)}/documents`;
  return {
    async add(input, options = {}) {
      const init = "file" in input ? { form: uploadForm(input) } : { body: input };
      return request("POST", path, documentAcceptedSchema, { ...init, signal: options.signal });
    },
    list: ({ status, cursor, limit, signal } = {}) =>
      request("GET", `${path}${queryString({ status, cursor, limit })}`, documentPage, { signal }),
    get: (id, options = {}) =>
      request("GET", `${path}/${encodeURIComponent(id)}`, knowledgeDocumentSchema, {
        signal: options.signal,
      }),
    async delete(id, options = {}) {
      await expectNoContent(
        await send("DELETE", `${path}/${encodeURIComponent(id)}`, { signal: options.signal }),
      );
    },
  };
}

export function createKnowledgeBasesClient(requester: RestRequester): KnowledgeBasesClient {
  const { request, send } = requester;
  const client: KnowledgeBasesClient = {
    create: (body, options = {}) =>
      request("POST", "/api/v1/knowledge-bases", knowledgeBaseSchema, { body, signal: options.signal }),
    list: ({ cursor, limit, signal } = {}) =>
      request("GET", `/api/v1/knowledge-bases${queryString({ cursor, limit })}`, knowledgeBasePage, {
        signal,
      }),
    get: (slug, options = {}) =>
      request("GET", basePath(slug), knowledgeBaseSchema, { signal: options.signal }),
    async delete(slug, options = {}) {
      await expectNoContent(await send("DELETE", basePath(slug), { signal: options.signal }));
    },
    documents: (slug) => documentsClient(requester, slug),
    async waitUntilReady(slug, id, { timeoutMs = 120_000, intervalMs = 500, signal } = {}) {
      const deadline = Date.now() + timeoutMs;
      const documents = documentsClient(requester, slug);
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        try {
          const document = await documents.get(id, { signal });
          if (document.status === "ready") return document;
          if (document.status === "failed") throw new DocumentFailedError(document);
        } catch (error) {
          if (!(ApiError.isInstance(error) && error.isRetryable)) throw error;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0)
          throw new ApiError(0, "timeout", `document ${id} still not ready after ${timeoutMs} ms`);
        await delay(Math.min(intervalMs, remaining), signal);
      }
    },
    search: (slug, body, options = {}) =>
      request("POST", `${basePath(slug)}/search`, searchResponseSchema, { body, signal: options.signal }),
  };
  return client;
}
