import { expect, test } from "bun:test";
import { renderReport } from "./report.ts";

test("the report carries machine, command, a target summary, sections, failures and findings", () => {
  const report = renderReport({
    machine: {
      cores: 2,
      cpuModel: "AMD EPYC",
      memoryGiB: 23.5,
      kernel: "6.1",
      bunVersion: "1.4.5",
      wrkVersion: null,
    },
    startedAt: new Date("2026-01-02T03:04:05Z"),
    durationSeconds: 61.4,
    command: "bun run bench -- --quick",
    quick: true,
    sections: [
      {
        title: "1. Something",
        body: "| a |\n| --- |\n| 1 |",
        targets: [
          { target: "fast enough", measured: "12 ms", met: true },
          { target: "small enough", measured: "20 KB", met: false },
        ],
      },
    ],
    failures: [{ title: "3. Other", error: "it broke" }],
    findings: "- one finding",
    loadAverage: { start: "0.10, 0.20, 0.30", end: "1.00, 0.50, 0.40" },
  });
  expect(report).toContain("- Date: 2026-01-02T03:04:05.000Z (took 61 s)");
  expect(report).toContain("`bun run bench -- --quick` (quick subset");
  expect(report).toContain("2 cores (nproc), AMD EPYC, 23.5 GiB memory, Linux 6.1");
  expect(report).toContain("Bun fetch generator (wrk not installed)");
  expect(report).toContain("| fast enough | 12 ms | yes |");
  expect(report).toContain("| small enough | 20 KB | **no** |");
  expect(report).toContain("- 3. Other: it broke");
  expect(report).toContain("## 1. Something\n\n| a |");
  expect(report).toContain("0.10, 0.20, 0.30");
  expect(report.trimEnd().endsWith("## Findings\n\n- one finding")).toBe(true);
});
