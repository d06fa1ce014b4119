CREATE TABLE `webhook_payloads` (
	`run_id` text NOT NULL,
	`event_type` text NOT NULL,
	`tenant_id` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`run_id`, `event_type`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
-- Existing deliveries keep their bodies: one payload row per (run, event), the oldest delivery's.
INSERT INTO `webhook_payloads` (`run_id`, `event_type`, `tenant_id`, `payload`, `created_at`)
SELECT `run_id`, `event_type`, `tenant_id`, `payload`, `created_at` FROM (
	SELECT `run_id`, `event_type`, `tenant_id`, `payload`, `created_at`,
		row_number() OVER (PARTITION BY `run_id`, `event_type` ORDER BY `created_at`, `id`) AS `n`
	FROM `webhook_deliveries`
) WHERE `n` = 1;
--> statement-breakpoint
ALTER TABLE `webhook_deliveries` DROP COLUMN `payload`;