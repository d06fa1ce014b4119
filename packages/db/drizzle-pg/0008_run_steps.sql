DROP INDEX "runs_queue_idx";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "steps" json DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "required_action" json;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "paused_step" integer;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "pause_expires_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "runs_paused_idx" ON "runs" USING btree ("pause_expires_at","id") WHERE "runs"."paused_step" is not null;--> statement-breakpoint
CREATE INDEX "runs_queue_idx" ON "runs" USING btree ("priority","created_at","id") WHERE "runs"."status" = 'pending' and "runs"."paused_step" is null;