CREATE TABLE "kb_chunks" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"knowledge_base_id" text COLLATE "C" NOT NULL,
	"document_id" text COLLATE "C" NOT NULL,
	"ordinal" integer NOT NULL,
	"text" text COLLATE "C" NOT NULL,
	"tokens" integer NOT NULL,
	"embedding" "bytea" NOT NULL,
	"search_vector" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', "text")) STORED
);
--> statement-breakpoint
CREATE TABLE "kb_documents" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"knowledge_base_id" text COLLATE "C" NOT NULL,
	"external_id" text COLLATE "C",
	"filename" text COLLATE "C" NOT NULL,
	"media_type" text COLLATE "C" NOT NULL,
	"metadata" json NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"error" text COLLATE "C",
	"bytes" integer NOT NULL,
	"chunk_count" integer DEFAULT 0 NOT NULL,
	"tokens" integer DEFAULT 0 NOT NULL,
	"cost" json,
	"attempts" integer DEFAULT 0 NOT NULL,
	"content" "bytea",
	"lease_owner" text COLLATE "C",
	"lease_until" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"ready_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "knowledge_bases" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"slug" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C",
	"embedding_model" text COLLATE "C" NOT NULL,
	"chunk_max_tokens" integer NOT NULL,
	"chunk_overlap" integer NOT NULL,
	"vector_generation" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "retrieval" json DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "citations" json DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "kb_chunks" ADD CONSTRAINT "kb_chunks_document_id_kb_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."kb_documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_knowledge_base_id_knowledge_bases_id_fk" FOREIGN KEY ("knowledge_base_id") REFERENCES "public"."knowledge_bases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_bases" ADD CONSTRAINT "knowledge_bases_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_chunks_kb_document_idx" ON "kb_chunks" USING btree ("knowledge_base_id","document_id","ordinal");--> statement-breakpoint
CREATE INDEX "kb_chunks_document_idx" ON "kb_chunks" USING btree ("document_id");--> statement-breakpoint
CREATE INDEX "kb_chunks_search_idx" ON "kb_chunks" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "kb_documents_claim_idx" ON "kb_documents" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "kb_documents_kb_created_idx" ON "kb_documents" USING btree ("knowledge_base_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "kb_documents_external_id_unique" ON "kb_documents" USING btree ("knowledge_base_id","external_id") WHERE "kb_documents"."external_id" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "knowledge_bases_tenant_slug_unique" ON "knowledge_bases" USING btree ("tenant_id","slug");