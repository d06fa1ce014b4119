CREATE TABLE "webhook_payloads" (
	"run_id" text COLLATE "C" NOT NULL,
	"event_type" text COLLATE "C" NOT NULL,
	"tenant_id" text COLLATE "C" NOT NULL,
	"payload" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "webhook_payloads_run_id_event_type_pk" PRIMARY KEY("run_id","event_type")
);
--> statement-breakpoint
ALTER TABLE "webhook_payloads" ADD CONSTRAINT "webhook_payloads_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_payloads" ADD CONSTRAINT "webhook_payloads_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Existing deliveries keep their bodies: one payload row per (run, event), the oldest delivery's.
INSERT INTO "webhook_payloads" ("run_id", "event_type", "tenant_id", "payload", "created_at")
SELECT DISTINCT ON ("run_id", "event_type") "run_id", "event_type", "tenant_id", "payload", "created_at"
FROM "webhook_deliveries"
ORDER BY "run_id", "event_type", "created_at", "id";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "payload";