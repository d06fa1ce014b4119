import { expect, test } from "bun:test";
import { hardOpenFilesLimit, spawnChild, withFileLimit } from "./child-channel.ts";

const ECHO_CHILD = `
import { commands, emit } from "${import.meta.dir}/child-protocol.ts";

/** Ends the process with a code. */
const exitProcess: (code?: number) => never = process.exit.bind(process);
emit({ type: "ready", limit: Number(Bun.spawnSync(["sh", "-c", "ulimit -n"]).stdout.toString()) });
console.error("a line on stderr");
for await (const command of commands()) {
  if (command.type === "echo") emit({ type: "echoed", value: command.value });
  if (command.type === "exit") exitProcess(3);
}
`;

test("messages round-trip by type, stderr is kept, exit is reported", async () => {
  const wanted = hardOpenFilesLimit();
  const child = spawnChild(["bun", "-e", ECHO_CHILD], { fileLimit: wanted });
  const ready = await child.next<{ type: string; limit: number }>("ready", 20_000);
  expect(ready.limit).toBe(wanted);
  child.send({ type: "echo", value: 1 });
  child.send({ type: "echo", value: 2 });
  expect((await child.next<{ type: string; value: number }>("echoed")).value).toBe(1);
  expect((await child.next<{ type: string; value: number }>("echoed")).value).toBe(2);
  const waiting = child.next("never", 20_000);
  child.send({ type: "exit" });
  await expect(waiting).rejects.toThrow("exited (3)");
  expect(await child.exited).toBe(3);
  expect(child.output()).toContain("a line on stderr");
  expect(child.cpuSeconds()).toBeGreaterThan(0);
});

test("a missing message times out with the child's output", async () => {
  const child = spawnChild(["bun", "-e", "console.error('quiet child'); await Bun.sleep(30_000);"]);
  try {
    await expect(child.next("ready", 1_500)).rejects.toThrow("quiet child");
  } finally {
    await child.stop();
  }
});

test("withFileLimit raises a low soft limit and never lowers a higher one", () => {
  const softLimitUnder = (start: number, wanted: number) =>
    Bun.spawnSync([
      "sh",
      "-c",
      `ulimit -Sn ${start}; exec "$@"`,
      "sh",
      ...withFileLimit(["sh", "-c", "ulimit -Sn"], wanted),
    ])
      .stdout.toString()
      .trim();
  expect(hardOpenFilesLimit()).toBeGreaterThanOrEqual(2000);
  expect(softLimitUnder(1000, 2000)).toBe("2000");
  expect(softLimitUnder(1500, 1200)).toBe("1500");
});
