import {
  addDocumentJsonRequestSchema,
  createKnowledgeBaseRequestSchema,
  DOCUMENT_MEDIA_TYPES,
  documentAcceptedSchema,
  documentStatusSchema,
  EXTERNAL_ID_MAX_LENGTH,
  knowledgeBaseSchema,
  knowledgeDocumentSchema,
  pageOf,
  searchRequestSchema,
  searchResponseSchema,
  slugSchema,
  uuidSchema,
} from "@promptrun/contract";
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { errorResponse, errors, jsonBody, rateLimitHeaders } from "./error-responses.ts";

export const knowledgeBasesTag = {
  name: "Knowledge bases",
  description:
    "Documents chunked, embedded and indexed in the background; searched by keyword, vector or both; retrieved by prompts and cited by runs.",
};
const tags = [knowledgeBasesTag.name];

const knowledgeBasePageSchema = pageOf(knowledgeBaseSchema).meta({
  id: "KnowledgeBasePage",
  description: "In slug order; `nextCursor` is null on the last page.",
});
const documentPageSchema = pageOf(knowledgeDocumentSchema).meta({
  id: "KnowledgeDocumentPage",
  description: "Newest first; `nextCursor` is null on the last page.",
});

const kbParam = slugSchema.meta({ description: "The knowledge base's slug." });
const kbPath = z.object({ kb: kbParam });
const documentPath = z.object({ kb: kbParam, id: uuidSchema.meta({ description: "Document id (a UUID)." }) });
const pageParams = {
  cursor: z.string().max(200).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: "1–200, default 50." }),
};

const badQuery = errors[400]("An unknown or repeated query parameter, or a value out of range (named).");
const kbNotFound = errorResponse("Unknown or malformed slug, or a knowledge base of another tenant.");
const documentNotFound = errorResponse(
  "Unknown or malformed slug or id, or a knowledge base or document of another tenant.",
);
const uploadTooLarge = errorResponse(
  "The upload is larger than `PROMPTRUN_MAX_UPLOAD_BYTES` (20 MiB by default; the body may carry 64 KiB more for the multipart or JSON envelope). A declared Content-Length over the limit is refused before any byte is read; a chunked body is cut off at the limit.",
);

/** OpenAPI 3.1 multipart: a JSON Schema of the form's fields, the file as binary content. */
const multipartUploadSchema = {
  type: "object" as const,
  required: ["file"],
  properties: {
    file: {
      type: "string" as const,
      contentMediaType: "application/octet-stream",
      description: `The document; its filename is required. Types: ${DOCUMENT_MEDIA_TYPES.join(", ")} (by the part's Content-Type, else the filename's extension; the content must match).`,
    },
    metadata: {
      type: "string" as const,
      description: 'Optional JSON object text, e.g. `{"team":"support"}` (the run metadata rules).',
    },
    externalId: {
      type: "string" as const,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: "Optional: your id for the document; adding the same externalId again replaces it.",
    },
  },
};

const knowledgeBaseOperations: ZodOpenApiPathsObject = {
  "/api/v1/knowledge-bases": {
    post: {
      operationId: "create_knowledge_base",
      tags,
      summary: "Create a knowledge base",
      description:
        "`embeddingModel` is `provider:model` (default from PROMPTRUN_EMBEDDING_MODEL; `dev:hash` is built in, keyless). Chunking: maxTokens 64–2048 (default 512), overlap at most half of it (default 64).",
      requestBody: { required: true, content: jsonBody(createKnowledgeBaseRequestSchema) },
      responses: {
        201: {
          description: "The knowledge base.",
          content: jsonBody(knowledgeBaseSchema),
          headers: z.object({ Location: z.string().meta({ description: "/api/v1/knowledge-bases/{kb}" }) }),
        },
        400: errors[400]("Invalid JSON, a body field (named), or an unknown embedding model."),
        401: errors[401],
        403: errors[403],
        405: errors[405]("GET, HEAD, POST"),
        409: errorResponse("The slug is taken."),
        413: errors[413],
        415: errors[415],
        500: errors[500],
      },
    },
    get: {
      operationId: "list_knowledge_bases",
      tags,
      summary: "List knowledge bases",
      description: "Allowed without an active subscription.",
      requestParams: { query: z.object(pageParams) },
      responses: {
        200: { description: "One page of knowledge bases.", content: jsonBody(knowledgeBasePageSchema) },
        400: badQuery,
        401: errors[401],
        405: errors[405]("GET, HEAD, POST"),
        500: errors[500],
      },
    },
  },
  "/api/v1/knowledge-bases/{kb}": {
    get: {
      operationId: "get_knowledge_base",
      tags,
      summary: "Get a knowledge base",
      description: "With its document and chunk counts and its bytes.",
      requestParams: { path: kbPath },
      responses: {
        200: { description: "The knowledge base.", content: jsonBody(knowledgeBaseSchema) },
        401: errors[401],
        404: kbNotFound,
        405: errors[405]("GET, HEAD, DELETE"),
        500: errors[500],
      },
    },
    delete: {
      operationId: "delete_knowledge_base",
      tags,
      summary: "Delete a knowledge base",
      description: "Its documents and chunks go with it. Allowed without an active subscription.",
      requestParams: { path: kbPath },
      responses: {
        204: { description: "The knowledge base is gone." },
        401: errors[401],
        404: kbNotFound,
        405: errors[405]("GET, HEAD, DELETE"),
        500: errors[500],
      },
    },
  },
};

const documentOperations: ZodOpenApiPathsObject = {
  "/api/v1/knowledge-bases/{kb}/documents": {
    post: {
      operationId: "add_document",
      tags,
      summary: "Add a document",
      description:
        "A file as `multipart/form-data` (`file`, optional `metadata`, `externalId`) or text as JSON. Ingestion (extraction, chunking, embedding) runs in the background: poll get_document until `ready` or `failed`, or listen for the `document.ready` / `document.failed` webhooks. The same `externalId` again replaces that document. PROMPTRUN_MAX_BODY_BYTES does not apply here.",
      requestParams: { path: kbPath },
      requestBody: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: multipartUploadSchema,
            encoding: {
              file: { contentType: [...DOCUMENT_MEDIA_TYPES, "application/octet-stream"].join(", ") },
            },
          },
          "application/json": { schema: addDocumentJsonRequestSchema },
        },
      },
      responses: {
        202: {
          description: "The document is stored and queued for ingestion.",
          content: jsonBody(documentAcceptedSchema),
          headers: z.object({
            Location: z.string().meta({ description: "/api/v1/knowledge-bases/{kb}/documents/{id}" }),
            ...rateLimitHeaders,
          }),
        },
        400: errors[400](
          "Malformed multipart body, a missing `file`, metadata that is not a JSON object, an unknown field, invalid JSON or a body field (named).",
        ),
        401: errors[401],
        403: errors[403],
        404: kbNotFound,
        405: errors[405]("GET, HEAD, POST"),
        413: uploadTooLarge,
        415: errorResponse(
          "Content-Type is neither multipart/form-data nor application/json, or the document's type is not supported or its content is not what its name or type says.",
        ),
        429: errors[429],
        500: errors[500],
      },
    },
    get: {
      operationId: "list_documents",
      tags,
      summary: "List documents",
      requestParams: {
        path: kbPath,
        query: z.object({
          status: documentStatusSchema.optional().meta({ description: "Only documents in this status." }),
          ...pageParams,
        }),
      },
      responses: {
        200: { description: "One page of documents.", content: jsonBody(documentPageSchema) },
        400: badQuery,
        401: errors[401],
        404: kbNotFound,
        405: errors[405]("GET, HEAD, POST"),
        500: errors[500],
      },
    },
  },
  "/api/v1/knowledge-bases/{kb}/documents/{id}": {
    get: {
      operationId: "get_document",
      tags,
      summary: "Get a document",
      description:
        "Its status (`pending`, `processing`, `ready`, `failed` with `error`), chunks, tokens and cost.",
      requestParams: { path: documentPath },
      responses: {
        200: { description: "The document.", content: jsonBody(knowledgeDocumentSchema) },
        401: errors[401],
        404: documentNotFound,
        405: errors[405]("GET, HEAD, DELETE"),
        500: errors[500],
      },
    },
    delete: {
      operationId: "delete_document",
      tags,
      summary: "Delete a document",
      description: "Its chunks go with it.",
      requestParams: { path: documentPath },
      responses: {
        204: { description: "The document is gone." },
        401: errors[401],
        404: documentNotFound,
        405: errors[405]("GET, HEAD, DELETE"),
        500: errors[500],
      },
    },
  },
  "/api/v1/knowledge-bases/{kb}/search": {
    post: {
      operationId: "search_knowledge_base",
      tags,
      summary: "Search a knowledge base",
      description:
        "`mode`: `hybrid` (default; reciprocal rank fusion of keyword and vector results), `vector` (exact cosine similarity) or `keyword` (full-text). `topK` 1–50 (default 5); `filter` keeps chunks whose document metadata matches every key (`value` or `{in: [values]}`).",
      requestParams: { path: kbPath },
      requestBody: { required: true, content: jsonBody(searchRequestSchema) },
      responses: {
        200: {
          description: "The best chunks, best first.",
          content: jsonBody(searchResponseSchema),
          headers: z.object(rateLimitHeaders),
        },
        400: errors[400]("Invalid JSON or a body field (named), e.g. topK over 50."),
        401: errors[401],
        403: errors[403],
        404: kbNotFound,
        405: errors[405]("POST"),
        413: errors[413],
        415: errors[415],
        429: errors[429],
        500: errors[500],
      },
    },
  },
};

/** The knowledge base paths (docs/KNOWLEDGE.md). */
export const knowledgeOperations: ZodOpenApiPathsObject = {
  ...knowledgeBaseOperations,
  ...documentOperations,
};
