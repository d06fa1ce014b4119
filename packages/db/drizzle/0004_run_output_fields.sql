ALTER TABLE `messages` ADD `parts` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `output_json` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `finish_reason` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `memory_window` text;