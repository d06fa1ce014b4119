/**
 * `bun run bench -- --only=retrieval` refreshes just its own section of docs/BENCHMARKS.md: the
 * section of the same title is replaced (or, the first time, inserted before "## Findings"),
 * every other figure of the report stays as the last full run left it.
 */
import type { SectionResult } from "./sections/bench-context.ts";

export function spliceSection(
  report: string,
  section: SectionResult,
  run: { startedAt: Date; command: string; loadAverage: { start: string; end: string } },
): string {
  const heading = `## ${section.title}`;
  const stamp =
    `Measured ${run.startedAt.toISOString()} with \`${run.command}\`, apart from the rest of this report (machine as above; ` +
    `load average at the start ${run.loadAverage.start}, at the end ${run.loadAverage.end}).`;
  const block = `${heading}\n\n${stamp}\n\n${section.body.trim()}\n\n`;
  const lines = report.split("\n");
  const start = lines.indexOf(heading);
  if (start >= 0) {
    let end = lines.findIndex((line, index) => index > start && line.startsWith("## "));
    if (end < 0) end = lines.length;
    return `${[...lines.slice(0, start), block.trimEnd(), "", ...lines.slice(end)].join("\n").trimEnd()}\n`;
  }
  const findings = lines.indexOf("## Findings");
  if (findings < 0) return `${report.trimEnd()}\n\n${block.trimEnd()}\n`;
  return `${[...lines.slice(0, findings), block.trimEnd(), "", ...lines.slice(findings)].join("\n").trimEnd()}\n`;
}
