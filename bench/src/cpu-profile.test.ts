import { expect, test } from "bun:test";
import { componentOf, parseCpuProfileMarkdown, selfTimeByComponent, shortLocation } from "./cpu-profile.ts";

const SAMPLE = `# CPU Profile

| Duration | Samples | Interval | Functions |
|----------|---------|----------|----------|
| 6.94s | 3215 | 1.0ms | 1221 |

## Hot Functions (Self Time)

| Self% | Self | Total% | Total | Function | Location |
|------:|-----:|-------:|------:|----------|----------|
| 19.9% | 1.38s | 19.9% | 1.38s | \`values\` | \`[native code]\` |
| 3.6% | 251.6ms | 18.4% | 1.27s | \`(anonymous)\` | \`/work/main/node_modules/.bun/drizzle-orm@0.45.4+e14a/node_modules/drizzle-orm/sql/sql.js:62\` |
| 0.5% | 39.2ms | 0.5% | 39.2ms | \`(anonymous)\` | \`/work/main/packages/core/src/services/uuidv7.ts:34\` |
| 0.3% | 900us | 0.3% | 900us | \`x\` | \`/work/main/node_modules/.bun/@ai-sdk+provider-utils@4.0.1/node_modules/@ai-sdk/provider-utils/dist/index.js:3\` |

## Call Tree (Total Time)

| Total% | Total | Self% | Self | Function | Location |
|-------:|------:|------:|-----:|----------|----------|
| 100.0% | 40.46s | 97.8% | 2.94s | \`fib\` | \`/tmp/p.ts:1\` |

## Function Details

### \`values\`
\`[native code]\` | Self: 19.9% (1.38s) | Total: 19.9% (1.38s) | Samples: 759

**Called by:**
- \`get\` (753)
- \`all\` (6)

**Calls:**
- \`other\` (1)
`;

test("parses the summary, the hot functions and their callers", () => {
  const profile = parseCpuProfileMarkdown(SAMPLE);
  expect(profile.durationSeconds).toBeCloseTo(6.94, 6);
  expect(profile.samples).toBe(3215);
  expect(profile.intervalMs).toBe(1);
  expect(profile.hot).toHaveLength(4);
  expect(profile.hot[0]).toEqual({
    selfPercent: 19.9,
    selfMs: 1380,
    totalPercent: 19.9,
    name: "values",
    location: "[native code]",
    calledBy: [
      { name: "get", samples: 753 },
      { name: "all", samples: 6 },
    ],
  });
  expect(profile.hot[3]!.selfMs).toBeCloseTo(0.9, 6);
});

test("attributes locations to components and shortens paths", () => {
  const profile = parseCpuProfileMarkdown(SAMPLE);
  expect(profile.hot.map((entry) => componentOf(entry.location))).toEqual([
    "native (Bun runtime)",
    "drizzle-orm",
    "@promptrun/core",
    "@ai-sdk/provider-utils",
  ]);
  expect(shortLocation(profile.hot[1]!.location)).toBe("drizzle-orm/sql/sql.js:62");
  expect(shortLocation(profile.hot[2]!.location)).toBe("packages/core/src/services/uuidv7.ts:34");
  expect(selfTimeByComponent(profile)[0]).toEqual({ component: "native (Bun runtime)", selfPercent: 19.9 });
});

test("refuses text that is not a profile", () => {
  expect(() => parseCpuProfileMarkdown("# hello")).toThrow("not a Bun CPU profile");
});
