ALTER TABLE "runs" ADD COLUMN "lease_owner" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "lease_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_requested_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "lease_owner" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "lease_until" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "runs_queue_idx" ON "runs" USING btree ("priority","created_at","id") WHERE "runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "runs_channel_queue_idx" ON "runs" USING btree ("tenant_id","thread_id","channel","created_at","id") WHERE "runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "runs_leased_idx" ON "runs" USING btree ("tenant_id","lease_until") WHERE "runs"."status" = 'pending' and "runs"."lease_owner" is not null;