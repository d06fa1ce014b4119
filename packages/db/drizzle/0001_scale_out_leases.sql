ALTER TABLE `runs` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `lease_until` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `cancel_requested_at` integer;--> statement-breakpoint
CREATE INDEX `runs_queue_idx` ON `runs` (`priority`,`created_at`,`id`) WHERE "runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX `runs_channel_queue_idx` ON `runs` (`tenant_id`,`thread_id`,`channel`,`created_at`,`id`) WHERE "runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX `runs_leased_idx` ON `runs` (`tenant_id`,`lease_until`) WHERE "runs"."status" = 'pending' and "runs"."lease_owner" is not null;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `lease_until` integer;