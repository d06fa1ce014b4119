/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);
/**
 * The whole test suite: every package's tests through turbo, then the end-to-end suites in
 * tests/. Prints one closing line, "N passed, N failed", summed over every bun test run.
 */
/** SGR colour sequences: ESC [ … m. Built from a string so the regex holds no control character. */
const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

const run = async (command: string[]): Promise<{ code: number; passed: number; failed: number }> => {
  const child = Bun.spawn(command, {
    cwd: `${import.meta.dir}/..`,
    stdout: "pipe",
    stderr: "pipe",
    env: process.env,
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

const units = await run(["bunx", "turbo", "run", "test", "--concurrency=2", "--output-logs=full"]);
const endToEnd = await run(["bun", "test", "--cwd", "tests", "--timeout", "120000"]);
const passed = units.passed + endToEnd.passed;
const failed = units.failed + endToEnd.failed;
console.log(`\n${passed} passed, ${failed} failed`);
exitProcess(units.code !== 0 || endToEnd.code !== 0 || failed > 0 ? 1 : 0);
