/** What every section receives, and what it gives back to the report. */
export interface BenchContext {
  quick: boolean;
  /** A temporary directory the sections may write into. */
  scratchDir: string;
  /** The bench prompt files (see bench-prompts.ts). */
  promptsDir: string;
  /** The stamped fake upstream, in its own process. */
  upstream: { url: string; pid: number };
  log(message: string): void;
}

export interface TargetCheck {
  /** What was asked, e.g. "create-run at 100 connections ≥ 30 % of hello-world". */
  target: string;
  measured: string;
  met: boolean;
}

export interface SectionResult {
  title: string;
  /** Markdown: tables and short notes on method. */
  body: string;
  targets: TargetCheck[];
  /** Set when the section could not run here (e.g. no Postgres): one line, logged instead of reported. */
  skipped?: string;
}
