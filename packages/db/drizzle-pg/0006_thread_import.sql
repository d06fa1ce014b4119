ALTER TABLE "messages" ALTER COLUMN "run_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "external_id" text COLLATE "C";--> statement-breakpoint
CREATE UNIQUE INDEX "messages_external_id_idx" ON "messages" USING btree ("tenant_id","thread_id","channel","external_id") WHERE "messages"."external_id" IS NOT NULL;