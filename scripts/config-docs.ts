/**
 * Writes the README's configuration table and `.env.example` from apps/server/src/env.ts
 * (`bun run config-docs`); `--check` only reports whether they are up to date.
 */
import { renderEnvExample, withReadmeTable } from "../apps/server/src/configuration-docs.ts";

const root = `${import.meta.dir}/..`;
const targets = [
  { path: `${root}/README.md`, render: (current: string) => withReadmeTable(current) },
  { path: `${root}/.env.example`, render: () => renderEnvExample() },
];

const check = process.argv.includes("--check");
let stale = 0;
for (const target of targets) {
  const current = await Bun.file(target.path).text();
  const wanted = target.render(current);
  if (current === wanted) continue;
  stale += 1;
  if (check) console.error(`${target.path} is out of date: run \`bun run config-docs\``);
  else await Bun.write(target.path, wanted);
}
if (check && stale > 0) process.exit(1);
console.log(check ? "configuration docs are up to date" : `configuration docs written (${stale} changed)`);
