ALTER TABLE `runs` ADD `steps` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `required_action` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `paused_step` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `pause_expires_at` integer;--> statement-breakpoint
CREATE INDEX `runs_paused_idx` ON `runs` (`pause_expires_at`,`id`) WHERE "runs"."paused_step" is not null;