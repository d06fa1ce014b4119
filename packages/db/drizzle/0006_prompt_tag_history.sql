CREATE TABLE `prompt_tag_history` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`prompt_id` text NOT NULL,
	`tag` text NOT NULL,
	`version` integer,
	`previous_version` integer,
	`moved_at` integer NOT NULL,
	`moved_by` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_id`) REFERENCES `prompts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `prompt_tag_history_tag_idx` ON `prompt_tag_history` (`tenant_id`,`prompt_id`,`tag`,"moved_at" desc,"id" desc);