/**
 * The whole test suite: every package's tests through turbo, then the end-to-end suites in
 * tests/ on SQLite, then the same suites again on Postgres + Redis (PROMPTRUN_E2E_DATABASE=postgres)
 * when both answer, then the installable-kit test (scripts/kit/installable-kit.test.ts). The
 * Postgres pass runs every file but the scale-out suite (Postgres-only already, run in the SQLite
 * pass) and tests/support's own unit tests: the whole of it takes about as long as the SQLite
 * pass (~1.5 min on 2 cores), so no subset is needed. Prints one closing
 * line, "N passed, N failed", summed over every bun test run.
 *
 * Before the tests, the code checks that CI enforces (docs/ARCHITECTURE.md, "Rules and how they
 * are enforced"): the linter (`bun run lint`: format, lint rules, the process.env and
 * dependency-direction fences), unused files, dependencies and exports (`bun run knip`) and the
 * typecheck (`bun run typecheck`) and functions over 60 lines without a reason
 * (`scripts/long-functions.ts`). A failing check fails the run; the tests still run, so one
 * report shows everything.
 */
import { Glob } from "bun";

/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);

/** SGR colour sequences: ESC [ … m. Built from a string so the regex holds no control character. */
const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

const run = async (
  command: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; passed: number; failed: number }> => {
  const child = Bun.spawn(command, {
    cwd: `${import.meta.dir}/..`,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...extraEnv },
  });
  let passed = 0;
  let failed = 0;
  const pump = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      sink.write(text);
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const clean = line.replace(ANSI_COLOR, "");
        const pass = clean.match(/(?:^|\s)(\d+) pass$/);
        const fail = clean.match(/(?:^|\s)(\d+) fail$/);
        if (pass) passed += Number(pass[1]);
        if (fail) failed += Number(fail[1]);
      }
    }
  };
  await Promise.all([pump(child.stdout, process.stdout), pump(child.stderr, process.stderr)]);
  return { code: await child.exited, passed, failed };
};

/** Whether a TCP connection to the URL's host and port opens within two seconds. */
const reachable = async (url: string, defaultPort: number): Promise<boolean> => {
  const { hostname, port } = new URL(url);
  const attempt = new Promise<boolean>((resolve) => {
    Bun.connect({
      hostname,
      port: Number(port || defaultPort),
      socket: {
        open(socket) {
          socket.end();
          resolve(true);
        },
        data() {},
        connectError() {
          resolve(false);
        },
      },
    }).catch(() => resolve(false));
  });
  return Promise.race([attempt, Bun.sleep(2_000).then(() => false)]);
};

const E2E = ["bun", "test", "--cwd", "tests", "--timeout", "120000"];
/**
 * Databases the e2e harness creates are dropped by each server's dispose; a test that kills a
 * server or fails to start one can leave its database behind. Sweep them before and after the
 * pass (one suite runs at a time on a machine).
 */
async function dropStaleE2eDatabases(url: string): Promise<void> {
  const sql = new Bun.SQL(url, { max: 1 });
  try {
    const rows: Array<{ datname: string }> =
      await sql`select datname from pg_database where datname like 'promptrun_e2e_%'`;
    for (const { datname } of rows) await sql.unsafe(`drop database if exists "${datname}" with (force)`);
  } catch (error) {
    console.warn(
      `could not sweep stale e2e databases: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    await sql.close();
  }
}

const postgresUrl = process.env.PROMPTRUN_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.PROMPTRUN_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Every end-to-end file but scale-out (already on Postgres) and tests/support's unit tests. */
const postgresFiles = [...new Glob("**/*.test.ts").scanSync(`${import.meta.dir}/../tests`)]
  .filter((path) => !/(^|\/)(node_modules|scale-out|support)\//.test(path))
  .sort()
  .map((path) => `./${path}`);

const checks = [
  { name: "lint", command: ["bun", "run", "lint"] },
  { name: "knip", command: ["bun", "run", "knip"] },
  { name: "typecheck", command: ["bun", "run", "typecheck"] },
  { name: "long functions", command: ["bun", "scripts/long-functions.ts"] },
];
const checkResults: Array<{ name: string; code: number }> = [];
for (const check of checks) {
  console.log(`\ncheck: ${check.name}`);
  checkResults.push({ name: check.name, code: (await run(check.command)).code });
}
const failedChecks = checkResults.filter((check) => check.code !== 0).map((check) => check.name);

const results = [
  await run(["bunx", "turbo", "run", "test", "--concurrency=2", "--continue", "--output-logs=full"]),
];
results.push(await run(E2E, { PROMPTRUN_E2E_DATABASE: "sqlite" }));
const [postgresUp, redisUp] = await Promise.all([reachable(postgresUrl, 5432), reachable(redisUrl, 6379)]);
if (postgresUp && redisUp) {
  console.log(`\nend-to-end suite on Postgres + Redis (${postgresFiles.length} files)`);
  await dropStaleE2eDatabases(postgresUrl);
  results.push(await run([...E2E, ...postgresFiles], { PROMPTRUN_E2E_DATABASE: "postgres" }));
  await dropStaleE2eDatabases(postgresUrl);
} else {
  console.log("postgres/redis not reachable: skipping the end-to-end suite on Postgres");
}
// The packed kit in a fresh app outside the repository (npm install, Vite build, Chromium); the
// test skips with one line when Chromium or the npm registry is not reachable.
console.log("\ninstallable kit: the packed packages in a fresh Vite app");
results.push(await run(["bun", "test", "--timeout", "900000", "./scripts/kit/installable-kit.test.ts"]));
const passed = results.reduce((sum, result) => sum + result.passed, 0);
const failed = results.reduce((sum, result) => sum + result.failed, 0);
console.log(`\nchecks: ${failedChecks.length === 0 ? "all passed" : `failed: ${failedChecks.join(", ")}`}`);
console.log(`${passed} passed, ${failed} failed`);
exitProcess(failedChecks.length > 0 || results.some((result) => result.code !== 0) || failed > 0 ? 1 : 0);
