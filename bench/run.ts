/**
 * `bun run bench [-- --quick] [--only=create-run,streaming,fan-out,queue,profile,retrieval]`: starts
 * everything it measures on 127.0.0.1 (server, fake upstream, Portkey, load generators,
 * subscribers), bounded in time, and writes docs/BENCHMARKS.md. `--only=retrieval` (in process:
 * knowledge-base ingest and search on SQLite) replaces just its own section of that report. `--only=scale-out` (not in the
 * default set: it needs Postgres and Redis) writes docs/BENCHMARKS-SCALE-OUT.md instead.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeBenchPrompts } from "./src/bench-prompts.ts";
import { killAllChildren, spawnChild } from "./src/child-channel.ts";
import { machineInfo } from "./src/machine-info.ts";
import { renderReport } from "./src/report.ts";
import { RETRIEVAL_TITLE, retrievalSection } from "./src/retrieval.ts";
import { spliceSection } from "./src/retrieval-report.ts";
import type { BenchContext, SectionResult } from "./src/sections/bench-context.ts";
import { createRunSection } from "./src/sections/create-run-section.ts";
import { fanOutSection } from "./src/sections/fan-out-section.ts";
import { profileSection } from "./src/sections/profile-section.ts";
import { queueSection } from "./src/sections/queue-section.ts";
import { SCALE_OUT_TITLE, scaleOutSection } from "./src/sections/scale-out-section.ts";
import { streamingSection } from "./src/sections/streaming-section.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);

/** A report file other than docs/BENCHMARKS.md, for a section outside the default set. */
interface SeparateReport {
  path: string;
  heading: string;
  howToRun: string;
  loadGenerator?: string;
}

interface Section {
  title: string;
  run: (context: BenchContext) => Promise<SectionResult>;
  /** Only with --only=<name>; written to its own report. */
  separateReport?: SeparateReport;
  /** Run alone (--only), it replaces its own section of the main report instead of rewriting it. */
  splice?: boolean;
}

const MAIN_REPORT = "../docs/BENCHMARKS.md";

const SECTIONS: Record<string, Section> = {
  "create-run": { title: "1. Create-run throughput and latency", run: createRunSection },
  streaming: { title: "2. Streaming overhead", run: streamingSection },
  "fan-out": { title: "3. SSE fan-out", run: fanOutSection },
  queue: { title: "4. Completed runs per second and queue depth", run: queueSection },
  profile: { title: "5. Where the time goes (CPU profiles)", run: profileSection },
  retrieval: { title: RETRIEVAL_TITLE, run: retrievalSection, splice: true },
  "scale-out": {
    title: SCALE_OUT_TITLE,
    run: scaleOutSection,
    separateReport: {
      path: "../docs/BENCHMARKS-SCALE-OUT.md",
      heading: "Benchmarks: scale-out (Postgres + Redis, 1 and 3 instances)",
      howToRun:
        "Run it: `bun run bench -- --only=scale-out` (about 2–3 minutes; `--quick` for about 1–2). It needs Postgres and Redis " +
        "(PROMPTRUN_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test, with the right to CREATE DATABASE; " +
        "PROMPTRUN_BENCH_REDIS_URL, default redis://127.0.0.1:6379) and is skipped with one line when either is not reachable. " +
        "Each measurement gets a fresh database and Redis key prefix, dropped and deleted at the end; nothing but loopback traffic; every child process is stopped at the end.",
      loadGenerator: "Bun keep-alive fetch generator for every row (round-robin over several ports)",
    },
  },
};

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    out: { type: "string" },
  },
});
const quick = values.quick === true;
const selected = values.only
  ? values.only.split(",").map((name) => name.trim())
  : Object.keys(SECTIONS).filter((name) => !SECTIONS[name]?.separateReport);
for (const name of selected) {
  if (!SECTIONS[name]) {
    console.error(`unknown section '${name}'; choose from ${Object.keys(SECTIONS).join(", ")}`);
    exitProcess(2);
  }
}
// The whole run is bounded: past this, every child is killed and the run fails.
const budgetMs = (quick ? 5 : 15) * 60_000;
const startedAt = new Date();
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(", ");
const loadAtStart = loadAverage();
const log = (message: string) => {
  const elapsed = ((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[bench ${elapsed}s] ${message}\n`);
};

const watchdog = setTimeout(() => {
  log(`over the ${budgetMs / 60_000} min budget: stopping every child process`);
  killAllChildren();
  exitProcess(1);
}, budgetMs);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    killAllChildren();
    exitProcess(130);
  });
}

const scratchDir = mkdtempSync(join(tmpdir(), "promptrun-bench-run-"));
const upstream = spawnChild(["bun", join(import.meta.dir, "src/processes/stamped-upstream.ts")], {
  fileLimit: 65_536,
});
const sections: Array<{ name: string; result: SectionResult }> = [];
const failures: Array<{ name: string; title: string; error: string }> = [];
try {
  const { url } = await upstream.next<{ type: string; url: string }>("ready", 30_000);
  const context: BenchContext = {
    quick,
    scratchDir,
    promptsDir: await writeBenchPrompts(scratchDir),
    upstream: { url, pid: upstream.pid },
    log,
  };
  for (const name of selected) {
    const section = SECTIONS[name]!;
    log(`section ${section.title}`);
    try {
      const result = await section.run(context);
      if (result.skipped) log(result.skipped);
      else sections.push({ name, result });
    } catch (error) {
      const message =
        error instanceof Error ? error.message.split("\n").slice(0, 6).join(" ") : String(error);
      log(
        `section ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      failures.push({ name, title: section.title, error: message });
    }
  }
} finally {
  await upstream.stop(2_000);
  killAllChildren();
  rmSync(scratchDir, { recursive: true, force: true });
}
clearTimeout(watchdog);

const command = `bun run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
const durationSeconds = (Date.now() - startedAt.getTime()) / 1000;
const loadAtEnd = loadAverage();
/** The report a section goes to: its own, or the main one (where --out points). */
const reportOf = (name: string) => SECTIONS[name]?.separateReport ?? null;
const reports = new Map<string, SeparateReport | null>();
for (const name of selected) {
  const separate = reportOf(name);
  reports.set(separate ? separate.path : (values.out ?? MAIN_REPORT), separate);
}
for (const [path, separate] of reports) {
  const own = (name: string) => (separate ? reportOf(name) === separate : !reportOf(name));
  const ownSections = sections.filter((section) => own(section.name)).map((section) => section.result);
  const ownFailures = failures.filter((failure) => own(failure.name));
  // A report whose sections were all skipped keeps its previous figures.
  if (!ownSections.length && !ownFailures.length) continue;
  const outPath = resolve(import.meta.dir, path);
  if (!separate && values.only && !values.out && selected.every((name) => SECTIONS[name]?.splice)) {
    if (ownFailures.length) continue;
    let spliced = readFileSync(outPath, "utf8");
    const load = { start: loadAtStart, end: loadAtEnd };
    for (const section of ownSections)
      spliced = spliceSection(spliced, section, { startedAt, command, loadAverage: load });
    await Bun.write(outPath, spliced);
    Bun.spawnSync(["bunx", "biome", "format", "--write", outPath], { cwd: resolve(import.meta.dir, "..") });
    log(`replaced its section in ${outPath}`);
    continue;
  }
  const report = renderReport({
    machine: machineInfo(),
    startedAt,
    durationSeconds,
    command,
    quick,
    sections: ownSections,
    failures: ownFailures.map(({ title, error }) => ({ title, error })),
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    ...(separate
      ? {
          heading: separate.heading,
          howToRun: separate.howToRun,
          ...(separate.loadGenerator ? { loadGenerator: separate.loadGenerator } : {}),
        }
      : { findings: readFileSync(join(import.meta.dir, "findings.md"), "utf8") }),
  });
  await Bun.write(outPath, report);
  // The repository's formatter aligns Markdown tables: keep the generated file lint-clean.
  const formatted = Bun.spawnSync(["bunx", "biome", "format", "--write", outPath], {
    cwd: resolve(import.meta.dir, ".."),
  });
  if (formatted.exitCode !== 0)
    log(`biome could not format ${outPath}: ${formatted.stderr.toString().trim()}`);
  log(`wrote ${outPath}`);
}
exitProcess(failures.length ? 1 : 0);
