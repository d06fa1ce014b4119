/**
 * The code rules CI enforces with Biome (biome.jsonc; docs/ARCHITECTURE.md "Rules and how they
 * are enforced"): process.env only in apps/server/src/env.ts, and imports that follow the
 * dependency direction. Each case is a file at a real package path in a scratch copy of the
 * configuration, linted by the repository's own Biome: the rule must fire, or stay quiet.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const repoRoot = join(import.meta.dir, "..");
const biome = join(repoRoot, "node_modules", ".bin", "biome");

type Rule = "noProcessEnv" | "noRestrictedImports";
interface Case {
  path: string;
  source: string;
  fires: Rule[];
}

const readsEnv = "export const value = process.env.VALUE;\n";
const importing = (specifier: string, name = "thing") =>
  `import { ${name} } from "${specifier}";\n\nexport const value = ${name};\n`;

const cases: Record<string, Case> = {
  "core reads process.env": {
    path: "packages/core/src/config-reader.ts",
    source: readsEnv,
    fires: ["noProcessEnv"],
  },
  "api reads process.env": { path: "packages/api/src/app-env.ts", source: readsEnv, fires: ["noProcessEnv"] },
  "the server outside env.ts reads process.env": {
    path: "apps/server/src/server-env.ts",
    source: readsEnv,
    fires: ["noProcessEnv"],
  },
  "env.ts reads process.env": { path: "apps/server/src/env.ts", source: readsEnv, fires: [] },
  "a test reads process.env": { path: "packages/db/src/store.test.ts", source: readsEnv, fires: [] },
  "the e2e support reads process.env": { path: "tests/support/data-set.ts", source: readsEnv, fires: [] },
  "contract imports core": {
    path: "packages/contract/src/run.ts",
    source: importing("@promptrun/core"),
    fires: ["noRestrictedImports"],
  },
  "core imports db": {
    path: "packages/core/src/engine/engine.ts",
    source: importing("@promptrun/db"),
    fires: ["noRestrictedImports"],
  },
  "core imports bun:sqlite": {
    path: "packages/core/src/ports.ts",
    source: importing("bun:sqlite", "Database"),
    fires: ["noRestrictedImports"],
  },
  "core imports contract": {
    path: "packages/core/src/ports.ts",
    source: importing("@promptrun/contract"),
    fires: [],
  },
  "api imports db": {
    path: "packages/api/src/app.ts",
    source: importing("@promptrun/db"),
    fires: ["noRestrictedImports"],
  },
  "api imports core": { path: "packages/api/src/app.ts", source: importing("@promptrun/core"), fires: [] },
  "an api test imports db and bun:test": {
    path: "packages/api/src/app.test.ts",
    source: `${importing("@promptrun/db")}import { test } from "bun:test";\n\ntest("x", () => {});\n`,
    fires: [],
  },
  "client imports core's test kit": {
    path: "packages/client/src/promptrun-client.ts",
    source: importing("@promptrun/core/testing"),
    fires: ["noRestrictedImports"],
  },
  "react imports api at run time": {
    path: "packages/react/src/use-run.ts",
    source: importing("@promptrun/api"),
    fires: ["noRestrictedImports"],
  },
  "react's trpc client imports the AppRouter type": {
    path: "packages/react/src/trpc-client.ts",
    source: 'import type { AppRouter } from "@promptrun/api";\n\nexport type Router = AppRouter;\n',
    fires: [],
  },
  "react's trpc client imports core": {
    path: "packages/react/src/trpc-client.ts",
    source: importing("@promptrun/core"),
    fires: ["noRestrictedImports"],
  },
  "an app imports a package's source file": {
    path: "apps/server/src/server.ts",
    source: importing("@promptrun/core/src/engine/engine.ts"),
    fires: ["noRestrictedImports"],
  },
};

let scratch: string;
/** Rule names that fired, by case name. */
const fired = new Map<string, string[]>();

/** Lints one tree of files at their real paths under a copy of biome.jsonc. */
async function lintTree(root: string, files: Array<{ name: string; path: string; source: string }>) {
  await writeFile(join(root, "biome.jsonc"), await Bun.file(join(repoRoot, "biome.jsonc")).text());
  for (const { path, source } of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), source);
  }
  const lint = Bun.spawn(
    [biome, "lint", "--vcs-enabled=false", "--reporter=json", "--max-diagnostics=none", "."],
    {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const report = JSON.parse(await new Response(lint.stdout).text()) as {
    diagnostics: Array<{ category: string; location: { path: string } }>;
  };
  await lint.exited;
  for (const { name, path } of files) {
    const rules = report.diagnostics
      .filter((diagnostic) => diagnostic.location.path.replace(/^\.\//, "") === path)
      .map((diagnostic) => diagnostic.category.replace(/^lint\/\w+\//, ""));
    fired.set(name, rules);
  }
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "promptrun-code-rules-"));
  // Overrides match paths from the configuration's folder, so cases that share a path go to
  // separate trees.
  const trees: Array<Array<{ name: string; path: string; source: string }>> = [];
  for (const [name, { path, source }] of Object.entries(cases)) {
    let tree = trees.find((files) => !files.some((file) => file.path === path));
    if (!tree) {
      tree = [];
      trees.push(tree);
    }
    tree.push({ name, path, source });
  }
  for (const [index, files] of trees.entries()) {
    const root = join(scratch, `tree-${index}`);
    await mkdir(root);
    await lintTree(root, files);
  }
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("code rules (biome.jsonc)", () => {
  for (const [name, { fires }] of Object.entries(cases)) {
    test(`${name}: ${fires.length === 0 ? "allowed" : fires.join(", ")}`, () => {
      const rules = (fired.get(name) ?? []).filter(
        (rule) => rule === "noProcessEnv" || rule === "noRestrictedImports",
      );
      expect(rules.sort()).toEqual([...fires].sort());
    });
  }
});
