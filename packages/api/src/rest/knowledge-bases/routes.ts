import type { RestHandler } from "../rest-context.ts";
import {
  deleteDocumentHandler,
  getDocumentHandler,
  listDocumentsHandler,
  searchHandler,
} from "./documents.ts";
import {
  createKnowledgeBaseHandler,
  deleteKnowledgeBaseHandler,
  getKnowledgeBaseHandler,
  listKnowledgeBasesHandler,
} from "./knowledge-bases.ts";
import { addDocumentHandler } from "./upload.ts";

/** The knowledge base routes (docs/KNOWLEDGE.md), `[method, pattern, handler]`, registered by the app. */
export const knowledgeBaseRoutes: ReadonlyArray<readonly [string, string, RestHandler]> = [
  // GET first on each path: a 405's Allow reads `GET, HEAD, POST` as on the other paths.
  ["GET", "/api/v1/knowledge-bases", listKnowledgeBasesHandler],
  ["POST", "/api/v1/knowledge-bases", createKnowledgeBaseHandler],
  ["GET", "/api/v1/knowledge-bases/:kb", getKnowledgeBaseHandler],
  ["DELETE", "/api/v1/knowledge-bases/:kb", deleteKnowledgeBaseHandler],
  ["GET", "/api/v1/knowledge-bases/:kb/documents", listDocumentsHandler],
  ["POST", "/api/v1/knowledge-bases/:kb/documents", addDocumentHandler],
  ["GET", "/api/v1/knowledge-bases/:kb/documents/:id", getDocumentHandler],
  ["DELETE", "/api/v1/knowledge-bases/:kb/documents/:id", deleteDocumentHandler],
  ["POST", "/api/v1/knowledge-bases/:kb/search", searchHandler],
];
