import { addDocumentJsonRequestSchema } from "@promptrun/contract";
import { type DocumentUpload, formatValidationError, invalid, PromptrunError } from "@promptrun/core";
import { authenticateRequest } from "../../console/console-request.ts";
import { isJsonContentType } from "../../http/content-type.ts";
import { jsonResponse } from "../../http/json-response.ts";
import { parseJsonBody } from "../../http/parse-json-body.ts";
import { readBodyBytes } from "../../http/read-body-bytes.ts";
import { withRateLimitHeaders } from "../rate-limited-response.ts";
import type { RestContext } from "../rest-context.ts";
import { documentLocation, NO_STORE, requireKnowledgeBaseParam } from "./kb-path.ts";
import { declaredPartType, multipartBoundary, parseFormData } from "./multipart.ts";

/**
 * Room for the multipart envelope (boundaries, part headers, metadata) or JSON quoting around a
 * document of the full upload size; the service checks the document itself against the limit.
 */
export const UPLOAD_ENVELOPE_BYTES = 64 * 1024;

const ALLOWED_FIELDS = new Set(["file", "metadata", "externalId"]);
/** Generic part types say nothing: the filename's extension decides (docs/KNOWLEDGE.md). */
const GENERIC_TYPES = new Set(["application/octet-stream", "binary/octet-stream"]);

type BodyKind = "json" | "multipart";

function bodyKindOf(contentType: string | null): BodyKind {
  if (isJsonContentType(contentType)) return "json";
  const mediaType = (contentType ?? "").split(";", 1)[0]?.trim().toLowerCase();
  if (mediaType === "multipart/form-data") return "multipart";
  throw new PromptrunError(
    "unsupported_media_type",
    "Content-Type must be multipart/form-data (a file) or application/json ({text, filename})",
  );
}

/** A multipart field given as text (not a file), at most once. */
function textField(form: Awaited<ReturnType<typeof parseFormData>>, name: string): string | undefined {
  const values = form.getAll(name);
  if (values.length > 1) throw invalid(`multipart field '${name}' is given more than once`);
  const [value] = values;
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`multipart field '${name}' must be text, not a file`);
  return value;
}

function parseMetadataField(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('multipart field \'metadata\' must be a JSON object, e.g. {"team":"support"}');
  }
}

/** `file` (required, once), `metadata` (JSON text), `externalId`; any other field is a 400. */
async function multipartUpload(body: Uint8Array, contentType: string): Promise<DocumentUpload> {
  const form = await parseFormData(body, contentType);
  for (const name of new Set(form.keys())) {
    if (!ALLOWED_FIELDS.has(name)) {
      throw invalid(`unknown multipart field '${name}': send file, metadata and externalId`);
    }
  }
  const files = form.getAll("file");
  const [file] = files;
  if (file === undefined || typeof file === "string") {
    throw invalid("multipart field 'file' is required and must be a file (with a filename)");
  }
  if (files.length > 1)
    throw invalid("send one file per request (multipart field 'file' is given more than once)");
  const declared = declaredPartType(body, multipartBoundary(contentType) ?? "", "file");
  const externalId = textField(form, "externalId");
  return {
    content: new Uint8Array(await file.arrayBuffer()),
    filename: file.name,
    ...(declared !== undefined && !GENERIC_TYPES.has(declared) ? { mediaType: declared } : {}),
    ...(form.has("metadata") ? { metadata: parseMetadataField(textField(form, "metadata")) } : {}),
    ...(externalId !== undefined ? { externalId } : {}),
  };
}

/** `{text, filename, mediaType?, metadata?, externalId?}`: the text becomes its UTF-8 bytes. */
function jsonUpload(body: Uint8Array, maxJsonDepth: number): DocumentUpload {
  const parsed = addDocumentJsonRequestSchema.safeParse(parseJsonBody(body, maxJsonDepth));
  if (!parsed.success) throw invalid(formatValidationError(parsed.error));
  const { text, filename, mediaType, metadata, externalId } = parsed.data;
  return {
    content: new TextEncoder().encode(text),
    filename,
    text: true,
    ...(mediaType !== undefined ? { mediaType } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(externalId !== undefined ? { externalId } : {}),
  };
}

/**
 * POST /api/v1/knowledge-bases/{kb}/documents → 202 `{id, status: "pending"}` with `Location`.
 * Order: path (404), key (401), subscription (403), content type (415), size (413: a declared
 * Content-Length over the limit before any byte is read; a chunked body cut off at the limit),
 * body (400); the service then checks the document (400, 413, 415) and the knowledge base (404).
 * The global JSON cap (PROMPTRUN_MAX_BODY_BYTES) does not apply: uploads have
 * PROMPTRUN_MAX_UPLOAD_BYTES.
 */
export async function addDocumentHandler({ request, params, deps }: RestContext): Promise<Response> {
  const slug = requireKnowledgeBaseParam(params);
  const tenant = await authenticateRequest(deps, request);
  deps.services.auth.requireActiveSubscription(tenant);
  const contentType = request.headers.get("content-type");
  const kind = bodyKindOf(contentType);
  const { maxUploadBytes, maxJsonDepth } = deps.config;
  const body = await readBodyBytes(request, maxUploadBytes + UPLOAD_ENVELOPE_BYTES, {
    tooLargeMessage: `the upload exceeds the limit of ${maxUploadBytes} bytes per document (PROMPTRUN_MAX_UPLOAD_BYTES)`,
  });
  const upload =
    kind === "json" ? jsonUpload(body, maxJsonDepth) : await multipartUpload(body, contentType ?? "");
  return withRateLimitHeaders(deps, tenant.id, "knowledge.documents", async (rateLimitHeaders) => {
    const accepted = await deps.services.knowledge.addDocument(tenant.id, slug, upload);
    return jsonResponse(202, accepted, {
      location: documentLocation(slug, accepted.id),
      ...NO_STORE,
      ...rateLimitHeaders(),
    });
  });
}
