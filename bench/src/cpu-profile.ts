/** Reads the Markdown CPU profile Bun writes with `--cpu-prof-md`. */

export interface HotFunction {
  selfPercent: number;
  selfMs: number;
  totalPercent: number;
  name: string;
  location: string;
  /** Callers with sample counts, from the "Function Details" section. */
  calledBy: Array<{ name: string; samples: number }>;
}

export interface CpuProfile {
  durationSeconds: number;
  samples: number;
  intervalMs: number;
  hot: HotFunction[];
}

const toMs = (text: string): number => {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) return Number.NaN;
  return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as const)[match[2] as "us" | "ms" | "s"];
};

const unquote = (cell: string) => cell.trim().replace(/^`|`$/g, "");

export function parseCpuProfileMarkdown(markdown: string): CpuProfile {
  const summary = /^\| ([\d.]+(?:us|ms|s)) \| (\d+) \| ([\d.]+(?:us|ms|s)) \| \d+ \|$/m.exec(markdown);
  if (!summary) throw new Error("not a Bun CPU profile (no summary table)");
  const hotSection = markdown.split("## Hot Functions (Self Time)")[1]?.split("\n## ")[0] ?? "";
  const hot: HotFunction[] = [];
  for (const line of hotSection.split("\n")) {
    const cells = line.split(" | ");
    if (cells.length !== 6 || !line.startsWith("| ") || !/^[\d.]+%$/.test(cells[0]!.slice(2))) continue;
    hot.push({
      selfPercent: Number.parseFloat(cells[0]!.slice(2)),
      selfMs: toMs(cells[1]!),
      totalPercent: Number.parseFloat(cells[2]!),
      name: unquote(cells[4]!),
      location: unquote(cells[5]!.replace(/ \|$/, "")),
      calledBy: [],
    });
  }
  // Details: "### `name`" then "`location` | Self: …", then "**Called by:**" and "- `caller` (n)" lines.
  const details = markdown.split("## Function Details")[1] ?? "";
  for (const block of details.split("\n### ").slice(1)) {
    const [heading, locationLine, ...rest] = block.split("\n");
    const name = unquote(heading ?? "");
    const location = unquote((locationLine ?? "").split(" | ")[0] ?? "");
    const target = hot.find(
      (entry) => entry.name === name && entry.location === location && entry.calledBy.length === 0,
    );
    if (!target) continue;
    let inCallers = false;
    for (const line of rest) {
      if (line.startsWith("**Called by:**")) inCallers = true;
      else if (line.startsWith("**")) inCallers = false;
      const caller = inCallers ? /^- `(.+)` \((\d+)\)$/.exec(line) : null;
      if (caller) target.calledBy.push({ name: caller[1]!, samples: Number(caller[2]) });
    }
  }
  return {
    durationSeconds: toMs(summary[1]!) / 1000,
    samples: Number(summary[2]),
    intervalMs: toMs(summary[3]!),
    hot,
  };
}

/** Which part of the stack a location belongs to: a repo package, an npm package, or the runtime. */
export function componentOf(location: string): string {
  if (location === "[native code]") return "native (Bun runtime)";
  if (location.startsWith("bun:sqlite")) return "bun:sqlite";
  const lastModules = location.lastIndexOf("node_modules/");
  if (lastModules !== -1) {
    const rest = location.slice(lastModules + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const repo = /\/(packages|apps)\/([^/]+)\//.exec(location);
  if (repo) return repo[1] === "packages" ? `@promptrun/${repo[2]}` : `apps/${repo[2]}`;
  return "runtime internals";
}

/** A location without the machine's paths: `drizzle-orm/sql/sql.js:62`, `packages/core/src/x.ts:3`. */
export function shortLocation(location: string): string {
  const lastModules = location.lastIndexOf("node_modules/");
  if (lastModules !== -1) return location.slice(lastModules + "node_modules/".length);
  const repo = /\/((?:packages|apps|bench)\/.*)$/.exec(location);
  return repo ? repo[1]! : location;
}

/** Self time per component, largest first, as a share of all samples. */
export function selfTimeByComponent(profile: CpuProfile): Array<{ component: string; selfPercent: number }> {
  const totals = new Map<string, number>();
  for (const entry of profile.hot) {
    const component = componentOf(entry.location);
    totals.set(component, (totals.get(component) ?? 0) + entry.selfPercent);
  }
  return [...totals.entries()]
    .map(([component, selfPercent]) => ({ component, selfPercent }))
    .sort((a, b) => b.selfPercent - a.selfPercent);
}
