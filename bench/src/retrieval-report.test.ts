import { describe, expect, test } from "bun:test";
import { spliceSection } from "./retrieval-report.ts";

const run = {
  startedAt: new Date("2026-11-27T00:00:00Z"),
  command: "bun run bench -- --only=retrieval",
  loadAverage: { start: "1.00, 0.50, 0.25", end: "2.00, 1.00, 0.50" },
};
const section = { title: "6. Retrieval", body: "| a |\n| --- |\n| 1 |", targets: [] };
const REPORT = "# Benchmarks\n\n## 1. Create-run\n\nfigures\n\n## Findings\n\nwords\n";

describe("spliceSection", () => {
  test("inserts the section before Findings the first time, keeping everything else", () => {
    const spliced = spliceSection(REPORT, section, run);
    expect(spliced).toBe(
      "# Benchmarks\n\n## 1. Create-run\n\nfigures\n\n## 6. Retrieval\n\nMeasured 2026-11-27T00:00:00.000Z with `bun run bench -- --only=retrieval`, apart from the rest of this report (machine as above; load average at the start 1.00, 0.50, 0.25, at the end 2.00, 1.00, 0.50).\n\n| a |\n| --- |\n| 1 |\n\n## Findings\n\nwords\n",
    );
  });

  test("replaces the section of the same title on the next run", () => {
    const once = spliceSection(REPORT, section, run);
    const twice = spliceSection(once, { ...section, body: "| a |\n| --- |\n| 2 |" }, run);
    expect(twice).toContain("| 2 |");
    expect(twice).not.toContain("| 1 |");
    expect(twice.match(/## 6\. Retrieval/g)).toHaveLength(1);
    expect(twice).toEndWith("## Findings\n\nwords\n");
  });

  test("appends at the end of a report without Findings", () => {
    expect(spliceSection("# Benchmarks\n", section, run)).toStartWith("# Benchmarks\n\n## 6. Retrieval\n");
  });
});
