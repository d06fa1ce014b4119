CREATE INDEX "runs_tenant_slug_idx" ON "runs" USING btree ("tenant_id","prompt_slug","created_at","id");--> statement-breakpoint
CREATE INDEX "runs_failed_idx" ON "runs" USING btree ("tenant_id","created_at","id") WHERE "runs"."status" = 'failed';--> statement-breakpoint
CREATE INDEX "runs_tenant_environment_idx" ON "runs" USING btree ("tenant_id","environment","created_at","id");