CREATE TABLE `kb_chunks` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`knowledge_base_id` text NOT NULL,
	`document_id` text NOT NULL,
	`ordinal` integer NOT NULL,
	`text` text NOT NULL,
	`tokens` integer NOT NULL,
	`embedding` blob NOT NULL,
	FOREIGN KEY (`document_id`) REFERENCES `kb_documents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `kb_chunks_id_unique` ON `kb_chunks` (`id`);--> statement-breakpoint
CREATE INDEX `kb_chunks_kb_document_idx` ON `kb_chunks` (`knowledge_base_id`,`document_id`,`ordinal`);--> statement-breakpoint
CREATE INDEX `kb_chunks_document_idx` ON `kb_chunks` (`document_id`);--> statement-breakpoint
CREATE TABLE `kb_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`knowledge_base_id` text NOT NULL,
	`external_id` text,
	`filename` text NOT NULL,
	`media_type` text NOT NULL,
	`metadata` text NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`bytes` integer NOT NULL,
	`chunk_count` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`cost` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`content` blob,
	`lease_owner` text,
	`lease_until` integer,
	`created_at` integer NOT NULL,
	`ready_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`knowledge_base_id`) REFERENCES `knowledge_bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `kb_documents_claim_idx` ON `kb_documents` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `kb_documents_kb_created_idx` ON `kb_documents` (`knowledge_base_id`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `kb_documents_external_id_unique` ON `kb_documents` (`knowledge_base_id`,`external_id`) WHERE "kb_documents"."external_id" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `knowledge_bases` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`slug` text NOT NULL,
	`description` text,
	`embedding_model` text NOT NULL,
	`chunk_max_tokens` integer NOT NULL,
	`chunk_overlap` integer NOT NULL,
	`vector_generation` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `knowledge_bases_tenant_slug_unique` ON `knowledge_bases` (`tenant_id`,`slug`);--> statement-breakpoint
ALTER TABLE `runs` ADD `retrieval` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `citations` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Hand-written (drizzle-kit has no virtual tables): the keyword index of kb_chunks, an FTS5
-- external-content table over kb_chunks.text keyed by seq, kept in sync by triggers, so every
-- insert and every delete of a chunk (cascades included) changes it in the same transaction.
CREATE VIRTUAL TABLE `kb_chunks_fts` USING fts5(`text`, content='kb_chunks', content_rowid='seq', tokenize='porter unicode61');--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_insert` AFTER INSERT ON `kb_chunks` BEGIN
  INSERT INTO `kb_chunks_fts` (rowid, `text`) VALUES (new.`seq`, new.`text`);
END;--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_delete` AFTER DELETE ON `kb_chunks` BEGIN
  INSERT INTO `kb_chunks_fts` (`kb_chunks_fts`, rowid, `text`) VALUES ('delete', old.`seq`, old.`text`);
END;
