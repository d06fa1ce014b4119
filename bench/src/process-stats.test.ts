import { expect, test } from "bun:test";
import { readCpuSeconds, readRssKb, startCpuWindow } from "./process-stats.ts";

test("RSS grows when the process holds more memory", () => {
  const before = readRssKb(process.pid);
  expect(before).toBeGreaterThan(1000);
  const held = new Uint8Array(64 * 1024 * 1024).fill(1);
  expect(readRssKb(process.pid)).toBeGreaterThan(before + 50_000);
  expect(held[held.length - 1]).toBe(1);
});

// The child reports its own CPU use (process.cpuUsage) around a busy loop; /proc must agree.
const SPINNER = `
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
console.log(JSON.stringify({ at: cpu() }));
const target = cpu() + 0.4;
while (cpu() < target) {}
console.log(JSON.stringify({ at: cpu() }));
await Bun.sleep(20_000);
`;

test("CPU seconds from /proc match what a busy child measured itself", async () => {
  const child = Bun.spawn(["bun", "-e", SPINNER], { stdout: "pipe" });
  try {
    const reader = child.stdout.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const nextLine = async (): Promise<{ at: number }> => {
      for (;;) {
        const newline = text.indexOf("\n");
        if (newline >= 0) {
          const line = text.slice(0, newline);
          text = text.slice(newline + 1);
          return JSON.parse(line) as { at: number };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("child exited");
        text += decoder.decode(value, { stream: true });
      }
    };
    const first = await nextLine();
    const stop = startCpuWindow([child.pid]);
    const second = await nextLine();
    const window = stop();
    const reported = second.at - first.at;
    // /proc counts in 10 ms ticks; allow two ticks each side plus the print itself.
    expect(window.cpuSeconds[child.pid]).toBeGreaterThan(reported - 0.05);
    expect(window.cpuSeconds[child.pid]).toBeLessThan(reported + 0.05);
    expect(readCpuSeconds(child.pid)).toBeGreaterThanOrEqual(second.at - 0.03);
  } finally {
    child.kill();
  }
});
