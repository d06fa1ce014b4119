import {
  addDocumentInputSchema,
  createKnowledgeBaseRequestSchema,
  type DocumentAccepted,
  documentListInputSchema,
  documentRefInputSchema,
  type KnowledgeBase,
  type KnowledgeDocument,
  knowledgeBaseRefInputSchema,
  type Page,
  pageRequestSchema,
  type SearchResponse,
  searchInputSchema,
} from "@promptrun/contract";
import type { Procedures, TrpcRoot } from "../root.ts";

/**
 * Knowledge bases over tRPC (docs/KNOWLEDGE.md): the REST surface except file uploads, which go
 * over REST multipart; `addText` takes text. Writes need an active subscription; reads and
 * deletes stay open.
 */
export function createKnowledgeBaseRouter(t: TrpcRoot, { tenantProcedure, subscribedProcedure }: Procedures) {
  return t.router({
    create: subscribedProcedure
      .input(createKnowledgeBaseRequestSchema)
      .mutation(
        ({ ctx, input }): Promise<KnowledgeBase> => ctx.services.knowledge.create(ctx.tenant.id, input),
      ),
    list: tenantProcedure
      .input(pageRequestSchema)
      .query(
        ({ ctx, input }): Promise<Page<KnowledgeBase>> => ctx.services.knowledge.list(ctx.tenant.id, input),
      ),
    get: tenantProcedure
      .input(knowledgeBaseRefInputSchema)
      .query(
        ({ ctx, input }): Promise<KnowledgeBase> =>
          ctx.services.knowledge.get(ctx.tenant.id, input.knowledgeBase),
      ),
    delete: tenantProcedure.input(knowledgeBaseRefInputSchema).mutation(async ({ ctx, input }) => {
      await ctx.services.knowledge.delete(ctx.tenant.id, input.knowledgeBase);
      return { deleted: true as const };
    }),
    addText: subscribedProcedure
      .input(addDocumentInputSchema)
      .mutation(({ ctx, input }): Promise<DocumentAccepted> => {
        const { knowledgeBase, text, ...fields } = input;
        return ctx.services.knowledge.addDocument(ctx.tenant.id, knowledgeBase, {
          ...fields,
          content: new TextEncoder().encode(text),
          text: true,
        });
      }),
    listDocuments: tenantProcedure
      .input(documentListInputSchema)
      .query(({ ctx, input }): Promise<Page<KnowledgeDocument>> => {
        const { knowledgeBase, ...page } = input;
        return ctx.services.knowledge.listDocuments(ctx.tenant.id, knowledgeBase, page);
      }),
    getDocument: tenantProcedure
      .input(documentRefInputSchema)
      .query(
        ({ ctx, input }): Promise<KnowledgeDocument> =>
          ctx.services.knowledge.getDocument(ctx.tenant.id, input.knowledgeBase, input.id),
      ),
    deleteDocument: tenantProcedure.input(documentRefInputSchema).mutation(async ({ ctx, input }) => {
      await ctx.services.knowledge.deleteDocument(ctx.tenant.id, input.knowledgeBase, input.id);
      return { deleted: true as const };
    }),
    /** A read, but it may cost an embedding call: subscribed, as REST. */
    search: subscribedProcedure
      .input(searchInputSchema)
      .query(
        ({ ctx, input }): Promise<SearchResponse> =>
          ctx.services.knowledge.search(ctx.tenant.id, input.knowledgeBase, input.request),
      ),
  });
}
