PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`channel` text NOT NULL,
	`run_id` text,
	`external_id` text,
	`role` text NOT NULL,
	`content` text NOT NULL,
	`parts` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`,`thread_id`) REFERENCES `threads`(`tenant_id`,`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_messages`("seq", "tenant_id", "thread_id", "channel", "run_id", "external_id", "role", "content", "parts", "created_at") SELECT "seq", "tenant_id", "thread_id", "channel", "run_id", NULL, "role", "content", "parts", "created_at" FROM `messages`;--> statement-breakpoint
DROP TABLE `messages`;--> statement-breakpoint
ALTER TABLE `__new_messages` RENAME TO `messages`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `messages_thread_channel_idx` ON `messages` (`tenant_id`,`thread_id`,`channel`,`seq`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_external_id_idx` ON `messages` (`tenant_id`,`thread_id`,`channel`,`external_id`) WHERE "messages"."external_id" IS NOT NULL;