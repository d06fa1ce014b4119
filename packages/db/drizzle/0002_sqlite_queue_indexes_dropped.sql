DROP INDEX `runs_queue_idx`;--> statement-breakpoint
DROP INDEX `runs_channel_queue_idx`;