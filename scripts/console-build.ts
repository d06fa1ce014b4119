/**
 * Builds the web console (apps/console) into apps/console/dist with Bun's bundler: index.html and
 * hashed assets under assets/, served by the server at /console (docs/console.md). With
 * `--if-stale`, builds only when a source file is newer than the last build (what `npm start`
 * does, so a fresh clone serves the console with no extra step).
 */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const appDir = join(root, "apps/console");
const sourceDir = join(appDir, "src");
const distDir = join(appDir, "dist");
const stamp = join(distDir, "index.html");

const newestSource = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    return Math.max(newest, time);
  }, 0);

const stale = () =>
  !existsSync(stamp) ||
  statSync(stamp).mtimeMs < Math.max(newestSource(sourceDir), statSync(join(appDir, "package.json")).mtimeMs);

if (process.argv.includes("--if-stale") && !stale()) process.exit(0);

const started = performance.now();
rmSync(distDir, { recursive: true, force: true });
const result = await Bun.build({
  entrypoints: [join(sourceDir, "index.html")],
  outdir: distDir,
  minify: true,
  splitting: true,
  sourcemap: "none",
  publicPath: "/console/",
  naming: { entry: "[name].[ext]", chunk: "assets/[name]-[hash].[ext]", asset: "assets/[name]-[hash].[ext]" },
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
const bytes = result.outputs.reduce((sum, output) => sum + output.size, 0);
console.log(
  `console built: ${result.outputs.length} files, ${(bytes / 1024).toFixed(0)} KiB, in ${Math.round(performance.now() - started)} ms → ${distDir}`,
);
