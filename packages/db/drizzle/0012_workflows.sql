CREATE TABLE `workflow_idempotency_keys` (
	`tenant_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`run_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `key`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`run_id`) REFERENCES `workflow_runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `workflow_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`workflow_id` text NOT NULL,
	`workflow_version_id` text NOT NULL,
	`workflow_slug` text NOT NULL,
	`workflow_version` integer NOT NULL,
	`thread_id` text NOT NULL,
	`priority` text NOT NULL,
	`environment` text NOT NULL,
	`inputs` text NOT NULL,
	`metadata` text NOT NULL,
	`encrypted_env_vars` text,
	`prompt_versions` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`output` text,
	`output_json` text,
	`error` text,
	`token_usage` text,
	`cost` text,
	`steps` text NOT NULL,
	`revision` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workflow_version_id`) REFERENCES `workflow_versions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`,`thread_id`) REFERENCES `threads`(`tenant_id`,`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `workflow_runs_tenant_created_idx` ON `workflow_runs` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `workflow_runs_pending_idx` ON `workflow_runs` (`created_at`,`id`) WHERE "workflow_runs"."status" = 'pending';--> statement-breakpoint
CREATE TABLE `workflow_tags` (
	`workflow_id` text NOT NULL,
	`tag` text NOT NULL,
	`version_id` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`workflow_id`, `tag`),
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`version_id`) REFERENCES `workflow_versions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `workflow_tags_version_idx` ON `workflow_tags` (`version_id`);--> statement-breakpoint
CREATE TABLE `workflow_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`workflow_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`version` integer NOT NULL,
	`definition` text NOT NULL,
	`content_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflow_versions_workflow_version_unique` ON `workflow_versions` (`workflow_id`,`version`);--> statement-breakpoint
CREATE TABLE `workflows` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`slug` text NOT NULL,
	`latest_version` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `workflows_tenant_slug_unique` ON `workflows` (`tenant_id`,`slug`);--> statement-breakpoint
ALTER TABLE `runs` ADD `workflow_run_id` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `workflow_step` text;--> statement-breakpoint
CREATE INDEX `runs_workflow_run_idx` ON `runs` (`workflow_run_id`) WHERE "runs"."workflow_run_id" is not null;