/**
 * Builds and packs the installable kit: @promptrun/contract, @promptrun/client, @promptrun/react
 * and @promptrun/testing, as npm tarballs an app outside this repository installs.
 *
 * Inside the monorepo the packages export their TypeScript source (no build step for the server
 * or the tests). Packing stages each package in a directory of its own with:
 * - dist/: ESM JavaScript (Bun.build) and .d.ts (tsc declarations, relative `.ts` imports
 *   rewritten to `.js`, so consumers need no TypeScript-only compiler flag);
 * - a package.json whose `exports` point at dist, with real versions in place of `workspace:*`
 *   and `catalog:`, peer dependencies for react, @tanstack/react-query and @trpc/*;
 * - README.md and CHANGELOG.md.
 * @promptrun/react/trpc carries the server's `AppRouter` as one bundled declaration that only
 * imports @trpc/server and zod types. @promptrun/testing bundles the server's private packages
 * (core, db, api) into its JavaScript and keeps their third-party dependencies as its own.
 *
 * Usage: bun scripts/kit/pack-kit.ts [--out <dir>] [--reuse-declarations]  (default: .kit-build/tarballs)
 * Prints one JSON line: {"tarballs": {"@promptrun/contract": "<path>", …}}.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { checkTarball } from "./check-tarball.ts";

const root = resolve(import.meta.dir, "..", "..");
const buildDir = join(root, ".kit-build");
const dtsTree = join(buildDir, "dts");
const outArgIndex = process.argv.indexOf("--out");
const outDir = resolve(outArgIndex > 0 ? (process.argv[outArgIndex + 1] ?? "") : join(buildDir, "tarballs"));

type Manifest = {
  name: string;
  version: string;
  description?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [key: string]: unknown;
};

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const rootManifest = readJson<{ workspaces: { catalog: Record<string, string> } }>(
  join(root, "package.json"),
);
const catalog = rootManifest.workspaces.catalog;
const manifestOf = (dir: string) => readJson<Manifest>(join(root, "packages", dir, "package.json"));

/** @trpc/client 11.25 does not typecheck against an AppRouter of @trpc/server 11.22: keep the minor. */
const TRPC_RANGE = `~${catalog["@trpc/server"]}`;
const PEERS = {
  react: ">=18",
  "@tanstack/react-query": `^${catalog["@tanstack/react-query"]?.split(".")[0]}.0.0`,
  "@trpc/client": TRPC_RANGE,
  "@trpc/server": TRPC_RANGE,
};

/** A dependency's published range: workspace siblings get their own version, catalog entries the catalog's. */
function publishedRange(name: string, range: string): string {
  if (range.startsWith("workspace:")) {
    const sibling = readdirSync(join(root, "packages")).find((dir) => manifestOf(dir).name === name);
    if (!sibling) throw new Error(`no workspace package named ${name}`);
    return manifestOf(sibling).version;
  }
  if (range === "catalog:") {
    const version = catalog[name];
    if (!version) throw new Error(`${name} is not in the workspace catalog`);
    return version;
  }
  return range;
}

const run = (command: string[], cwd = root) => {
  const result = Bun.spawnSync(command, { cwd, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) {
    throw new Error(`${command.join(" ")} failed:\n${result.stdout.toString()}${result.stderr.toString()}`);
  }
  return result.stdout.toString();
};

/** Relative `./x.ts` specifiers in emitted declarations become `./x.js`. */
const rewriteSpecifiers = (text: string) =>
  text.replace(/((?:from|import\()\s*["']\.{1,2}\/[^"']*?)\.tsx?(["'])/g, "$1.js$2");

function copyDeclarations(pkg: string, target: string): void {
  const source = join(dtsTree, pkg, "src");
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".d.ts") && !entry.name.includes(".test.")) {
        const destination = join(target, relative(source, path));
        mkdirSync(dirname(destination), { recursive: true });
        writeFileSync(destination, rewriteSpecifiers(readFileSync(path, "utf8")));
      }
    }
  };
  walk(source);
}

/** One declaration file for `entry` of the tree, inlining the given workspace packages. */
function bundleDeclarations(entry: string, hostPackage: string, inline: string[], outFile: string): void {
  // dts-bundle-generator resolves the third-party types from a package that has them installed.
  const host = join(root, "packages", hostPackage, ".kit-build");
  rmSync(host, { recursive: true, force: true });
  cpSync(dtsTree, host, { recursive: true });
  for (const file of new Bun.Glob("**/*.d.ts").scanSync(host)) {
    writeFileSync(join(host, file), rewriteSpecifiers(readFileSync(join(host, file), "utf8")));
  }
  writeFileSync(
    join(host, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023", "DOM"],
        module: "Preserve",
        moduleResolution: "bundler",
        strict: true,
        skipLibCheck: true,
        types: [],
        baseUrl: ".",
        paths: {
          "@promptrun/api": ["api/src/index.d.ts"],
          "@promptrun/client": ["client/src/index.d.ts"],
          "@promptrun/contract": ["contract/src/index.d.ts"],
          "@promptrun/core": ["core/src/index.d.ts"],
          "@promptrun/core/testing": ["core/src/testing/index.d.ts"],
          "@promptrun/db": ["db/src/index.d.ts"],
        },
      },
    }),
  );
  writeFileSync(join(host, "entry.d.ts"), entry);
  try {
    run([
      join(root, "node_modules", ".bin", "dts-bundle-generator"),
      "--no-check",
      "--no-banner",
      "--project",
      join(host, "tsconfig.json"),
      "--external-inlines",
      ...inline,
      "-o",
      outFile,
      join(host, "entry.d.ts"),
    ]);
  } finally {
    rmSync(host, { recursive: true, force: true });
  }
}

async function bundleJs(options: {
  entrypoints: string[];
  outdir: string;
  target: "browser" | "bun";
  external?: string[];
  plugins?: Bun.BunPlugin[];
}): Promise<Bun.BuildArtifact[]> {
  const result = await Bun.build({
    entrypoints: options.entrypoints,
    outdir: options.outdir,
    target: options.target,
    format: "esm",
    splitting: options.entrypoints.length > 1,
    ...(options.external ? { external: options.external } : { packages: "external" }),
    plugins: options.plugins ?? [],
    naming: { entry: "[name].js", chunk: "chunk-[hash].js" },
  });
  if (!result.success) throw new AggregateError(result.logs, "Bun.build failed");
  return result.outputs;
}

/** Bare package names imported by the built JavaScript and declarations under `dist` (builtins left out). */
function importedPackages(dist: string): Set<string> {
  const names = new Set<string>();
  // The transpiler's import scan, not a regular expression: text such as `from 'from' to 'to'` in a
  // message or `Omit<T, "from" | "to">` in a declaration is no import.
  const scanners = { js: new Bun.Transpiler({ loader: "js" }), ts: new Bun.Transpiler({ loader: "ts" }) };
  for (const file of new Bun.Glob("**/*.{js,d.ts}").scanSync({ cwd: dist, absolute: true })) {
    const text = readFileSync(file, "utf8");
    const scanner = file.endsWith(".d.ts") ? scanners.ts : scanners.js;
    for (const { path: specifier } of scanner.scanImports(text)) {
      if (/^[./]/.test(specifier)) continue;
      if (/^(node|bun):/.test(specifier) || specifier === "bun" || builtinModules.includes(specifier))
        continue;
      const parts = specifier.split("/");
      names.add(specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? specifier));
    }
  }
  return names;
}

function stage(dir: string, manifest: Manifest, extra: Record<string, unknown>): string {
  const target = join(buildDir, "stage", dir);
  const source = join(root, "packages", dir);
  for (const file of ["README.md", "CHANGELOG.md"]) {
    if (!existsSync(join(source, file))) throw new Error(`packages/${dir} has no ${file}`);
    cpSync(join(source, file), join(target, file));
  }
  const published: Record<string, unknown> = {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    type: "module",
    sideEffects: false,
    files: ["dist", "README.md", "CHANGELOG.md"],
    ...extra,
  };
  writeFileSync(join(target, "package.json"), `${JSON.stringify(published, null, 2)}\n`);
  return target;
}

const dependenciesOf = (manifest: Manifest, names: Iterable<string>) =>
  Object.fromEntries(
    [...names].sort().map((name) => {
      const range = manifest.dependencies?.[name];
      if (!range) throw new Error(`${manifest.name} imports ${name} but does not declare it`);
      return [name, publishedRange(name, range)];
    }),
  );

async function main(): Promise<void> {
  rmSync(join(buildDir, "stage"), { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // --reuse-declarations skips the slow tsc pass when iterating on this script.
  if (!(process.argv.includes("--reuse-declarations") && existsSync(dtsTree)))
    run([
      join(root, "node_modules", ".bin", "tsc"),
      "-p",
      join(import.meta.dir, "tsconfig.declarations.json"),
    ]);

  const staged: string[] = [];
  const entry = (name: string) => ({ types: `./dist/${name}.d.ts`, import: `./dist/${name}.js` });

  // contract
  {
    const manifest = manifestOf("contract");
    const dist = join(buildDir, "stage", "contract", "dist");
    await bundleJs({
      entrypoints: [join(root, "packages/contract/src/index.ts")],
      outdir: dist,
      target: "browser",
    });
    copyDeclarations("contract", dist);
    const deps = importedPackages(dist);
    staged.push(
      stage("contract", manifest, {
        exports: { ".": entry("index") },
        dependencies: dependenciesOf(manifest, deps),
      }),
    );
  }

  // client (+ ./testing: a fake Promptrun server for Bun tests)
  {
    const manifest = manifestOf("client");
    const dist = join(buildDir, "stage", "client", "dist");
    await bundleJs({
      entrypoints: [join(root, "packages/client/src/index.ts")],
      outdir: dist,
      target: "browser",
    });
    await bundleJs({
      entrypoints: [join(root, "packages/client/src/ai-sdk/index.ts")],
      outdir: join(dist, "ai-sdk"),
      target: "browser",
    });
    await bundleJs({
      entrypoints: [join(root, "packages/client/src/testing/index.ts")],
      outdir: join(dist, "testing"),
      target: "bun",
    });
    copyDeclarations("client", dist);
    // `ai` is only needed for the ./ai-sdk entry's types: an optional peer.
    const deps = [...importedPackages(dist)].filter((name) => name !== "ai");
    staged.push(
      stage("client", manifest, {
        exports: {
          ".": entry("index"),
          "./ai-sdk": entry("ai-sdk/index"),
          "./testing": entry("testing/index"),
        },
        dependencies: dependenciesOf(manifest, deps),
        peerDependencies: { ai: manifest.peerDependencies?.ai },
        peerDependenciesMeta: { ai: { optional: true } },
      }),
    );
  }

  // react (+ ./trpc with the bundled AppRouter declaration)
  {
    const manifest = manifestOf("react");
    const dist = join(buildDir, "stage", "react", "dist");
    await bundleJs({
      entrypoints: [
        join(root, "packages/react/src/index.ts"),
        join(root, "packages/react/src/trpc-client.ts"),
      ],
      outdir: dist,
      target: "browser",
    });
    copyDeclarations("react", dist);
    bundleDeclarations(
      'export type { AppRouter } from "@promptrun/api";\n',
      "react",
      ["@promptrun/api", "@promptrun/core", "@promptrun/db", "@promptrun/contract"],
      join(dist, "app-router.d.ts"),
    );
    const trpcTypes = join(dist, "trpc-client.d.ts");
    writeFileSync(
      trpcTypes,
      `${readFileSync(trpcTypes, "utf8").replace('from "@promptrun/api"', 'from "./app-router.js"')}export type { AppRouter } from "./app-router.js";\n`,
    );
    const imported = importedPackages(dist);
    const peers = Object.keys(PEERS);
    const deps = [...imported].filter((name) => !peers.includes(name));
    staged.push(
      stage("react", manifest, {
        exports: { ".": entry("index"), "./trpc": entry("trpc-client") },
        dependencies: dependenciesOf(manifest, deps),
        peerDependencies: PEERS,
        peerDependenciesMeta: { "@trpc/client": { optional: true }, "@trpc/server": { optional: true } },
      }),
    );
  }

  // testing: bundles core, db and api (private) for Bun; their third-party dependencies become its own.
  {
    const manifest = manifestOf("testing");
    const dist = join(buildDir, "stage", "testing", "dist");
    const serverPackages = ["contract", "core", "db", "api", "testing"].map(manifestOf);
    const thirdParty = new Map<string, string>();
    for (const pkg of serverPackages) {
      for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
        if (!name.startsWith("@promptrun/")) thirdParty.set(name, publishedRange(name, range));
      }
    }
    // db finds its migrations at <its module's folder>/../../drizzle: the bundle sits at
    // dist/server/bundle/, the migration folders at dist/.
    await bundleJs({
      entrypoints: [join(root, "packages/testing/src/index.ts")],
      outdir: join(dist, "server", "bundle"),
      target: "bun",
      external: ["@promptrun/contract", ...thirdParty.keys()],
      plugins: [
        {
          name: "no-api-reference-page",
          setup(build) {
            // The /docs page's 50 MB browser bundle is not part of the testing kit.
            build.onLoad({ filter: /openapi[\\/]scalar-bundle\.ts$/ }, () => ({
              loader: "ts",
              contents:
                "export const scalarBundlePath = () => '';\nexport const createScalarBundleHandler = () => async () => new Response('{\"error\":\"the API reference page is not served by @promptrun/testing\"}', { status: 404, headers: { 'content-type': 'application/json' } });\n",
            }));
          },
        },
      ],
    });
    for (const folder of ["drizzle", "drizzle-pg"]) {
      cpSync(join(root, "packages/db", folder), join(dist, folder), { recursive: true });
    }
    bundleDeclarations(
      'export * from "./testing/src/index.js";\n',
      "core",
      ["@promptrun/api", "@promptrun/core", "@promptrun/db"],
      join(dist, "index.d.ts"),
    );
    const imported = importedPackages(dist);
    const dependencies: Record<string, string> = {};
    for (const name of [...imported].sort()) {
      const range = name === "@promptrun/contract" ? manifestOf("contract").version : thirdParty.get(name);
      if (!range) throw new Error(`@promptrun/testing's bundle imports undeclared ${name}`);
      dependencies[name] = range;
    }
    staged.push(
      stage("testing", manifest, {
        exports: { ".": { types: "./dist/index.d.ts", bun: "./dist/server/bundle/index.js" } },
        engines: { bun: ">=1.3" },
        dependencies,
      }),
    );
  }

  const tarballs: Record<string, string> = {};
  for (const dir of staged) {
    const name = readJson<Manifest>(join(dir, "package.json")).name;
    const file =
      run(["npm", "pack", "--silent", "--pack-destination", outDir], dir).trim().split("\n").pop() ?? "";
    const tarball = join(outDir, file);
    await checkTarball(tarball);
    tarballs[name] = tarball;
  }
  console.log(JSON.stringify({ tarballs }));
}

await main();
