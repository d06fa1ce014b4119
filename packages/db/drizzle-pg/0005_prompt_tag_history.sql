CREATE TABLE "prompt_tag_history" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"prompt_id" text COLLATE "C" NOT NULL,
	"tag" text COLLATE "C" NOT NULL,
	"version" integer,
	"previous_version" integer,
	"moved_at" timestamp (3) with time zone NOT NULL,
	"moved_by" text COLLATE "C" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "prompt_tag_history" ADD CONSTRAINT "prompt_tag_history_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_tag_history" ADD CONSTRAINT "prompt_tag_history_prompt_id_prompts_id_fk" FOREIGN KEY ("prompt_id") REFERENCES "public"."prompts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "prompt_tag_history_tag_idx" ON "prompt_tag_history" USING btree ("tenant_id","prompt_id","tag","moved_at" DESC NULLS LAST,"id" DESC NULLS LAST);