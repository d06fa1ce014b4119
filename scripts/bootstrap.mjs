#!/usr/bin/env node
/**
 * Makes `npm start` / `npm test` work on a machine that has only Node.js and npm:
 * finds the pinned Bun (or installs it from the npm registry into .tools/), installs the
 * workspace from bun.lockb, then runs the given package script with Bun.
 * Usage: node scripts/bootstrap.mjs <script> [args…]
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager.replace(
  /^bun@/,
  "",
);
const localBun = join(root, ".tools", "node_modules", ".bin", "bun");

const versionOf = (command) => {
  const result = spawnSync(command, ["--version"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : null;
};

function findOrInstallBun() {
  if (versionOf("bun") === pinned) return "bun";
  if (existsSync(localBun) && versionOf(localBun) === pinned) return localBun;
  process.stderr.write(`bootstrap: installing bun@${pinned} from the npm registry into .tools/ …\n`);
  const install = spawnSync(
    "npm",
    ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", join(root, ".tools"), `bun@${pinned}`],
    {
      stdio: "inherit",
    },
  );
  if (install.status !== 0 || versionOf(localBun) !== pinned) {
    process.stderr.write(
      `bootstrap: could not install bun@${pinned}; install it with: npm install -g bun@${pinned}\n`,
    );
    process.exit(1);
  }
  return localBun;
}

const [script, ...args] = process.argv.slice(2);
if (!script) {
  process.stderr.write("usage: node scripts/bootstrap.mjs <script> [args…]\n");
  process.exit(2);
}
const bun = findOrInstallBun();
const installed = spawnSync(bun, ["install", "--frozen-lockfile"], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
});
if (installed.status !== 0) process.exit(installed.status ?? 1);

// Put the chosen bun first on PATH so nested `bun …` calls (turbo tasks) use the same one.
const env = { ...process.env, PATH: `${dirname(bun === "bun" ? "bun" : bun)}:${process.env.PATH}` };
const child = spawn(bun, ["run", script, ...args], { cwd: root, stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
