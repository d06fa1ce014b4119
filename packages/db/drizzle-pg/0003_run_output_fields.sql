ALTER TABLE "messages" ADD COLUMN "parts" json;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "output_json" json;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "finish_reason" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "memory_window" json;