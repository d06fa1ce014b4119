CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`run_id` text,
	`event_id` text,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`created_at` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`event_id`) REFERENCES `webhook_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("id", "webhook_id", "tenant_id", "run_id", "event_id", "event_type", "status", "attempts", "next_attempt_at", "created_at", "lease_owner", "lease_until") SELECT "id", "webhook_id", "tenant_id", "run_id", NULL, "event_type", "status", "attempts", "next_attempt_at", "created_at", "lease_owner", "lease_until" FROM `webhook_deliveries`;--> statement-breakpoint
-- Inside the migrator's transaction foreign_keys=OFF does nothing: dropping webhook_deliveries
-- would cascade to webhook_attempts, so the attempts are kept aside and put back.
CREATE TABLE `__webhook_attempts_kept` AS SELECT * FROM `webhook_attempts`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
INSERT INTO `webhook_attempts` SELECT * FROM `__webhook_attempts_kept` WHERE `id` NOT IN (SELECT `id` FROM `webhook_attempts`);--> statement-breakpoint
DROP TABLE `__webhook_attempts_kept`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_tenant_run_idx` ON `webhook_deliveries` (`tenant_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`);