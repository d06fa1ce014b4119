DROP INDEX `runs_pending_idx`;--> statement-breakpoint
CREATE INDEX `runs_pending_idx` ON `runs` (`tenant_id`,`priority`,`created_at`,`id`) WHERE "runs"."status" = 'pending';