CREATE TABLE "workflow_idempotency_keys" (
	"tenant_id" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"request_hash" text COLLATE "C" NOT NULL,
	"run_id" text COLLATE "C" NOT NULL,
	"thread_id" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "workflow_idempotency_keys_tenant_id_key_pk" PRIMARY KEY("tenant_id","key")
);
--> statement-breakpoint
CREATE TABLE "workflow_runs" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"workflow_id" text COLLATE "C" NOT NULL,
	"workflow_version_id" text COLLATE "C" NOT NULL,
	"workflow_slug" text COLLATE "C" NOT NULL,
	"workflow_version" integer NOT NULL,
	"thread_id" text COLLATE "C" NOT NULL,
	"priority" text COLLATE "C" NOT NULL,
	"environment" text COLLATE "C" NOT NULL,
	"inputs" json NOT NULL,
	"metadata" json NOT NULL,
	"encrypted_env_vars" text COLLATE "C",
	"prompt_versions" json NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"output" text COLLATE "C",
	"output_json" json,
	"error" text COLLATE "C",
	"token_usage" json,
	"cost" json,
	"steps" json NOT NULL,
	"revision" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_tags" (
	"workflow_id" text COLLATE "C" NOT NULL,
	"tag" text COLLATE "C" NOT NULL,
	"version_id" text COLLATE "C" NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "workflow_tags_workflow_id_tag_pk" PRIMARY KEY("workflow_id","tag")
);
--> statement-breakpoint
CREATE TABLE "workflow_versions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"workflow_id" text COLLATE "C" NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"version" integer NOT NULL,
	"definition" json NOT NULL,
	"content_hash" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"slug" text COLLATE "C" NOT NULL,
	"latest_version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "workflow_run_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "workflow_step" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "workflow_idempotency_keys" ADD CONSTRAINT "workflow_idempotency_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_idempotency_keys" ADD CONSTRAINT "workflow_idempotency_keys_run_id_workflow_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."workflow_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_version_id_workflow_versions_id_fk" FOREIGN KEY ("workflow_version_id") REFERENCES "public"."workflow_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_tenant_id_thread_id_threads_tenant_id_id_fk" FOREIGN KEY ("tenant_id","thread_id") REFERENCES "public"."threads"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_tags" ADD CONSTRAINT "workflow_tags_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_tags" ADD CONSTRAINT "workflow_tags_version_id_workflow_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."workflow_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workflow_runs_tenant_created_idx" ON "workflow_runs" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "workflow_runs_pending_idx" ON "workflow_runs" USING btree ("created_at","id") WHERE "workflow_runs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "workflow_tags_version_idx" ON "workflow_tags" USING btree ("version_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_versions_workflow_version_unique" ON "workflow_versions" USING btree ("workflow_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "workflows_tenant_slug_unique" ON "workflows" USING btree ("tenant_id","slug");--> statement-breakpoint
CREATE INDEX "runs_workflow_run_idx" ON "runs" USING btree ("workflow_run_id") WHERE "runs"."workflow_run_id" is not null;