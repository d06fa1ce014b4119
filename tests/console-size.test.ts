/**
 * The built console's size and its load time on loopback (docs/console.md "Size and load time"):
 * the bytes of apps/console/dist (all of it, and the initial load: index.html, its entry script
 * and stylesheet), raw and gzip; and, in Debian's Chromium against the real server, the time from
 * navigation start to the prompts screen's table on screen, the median of 5 cold loads (new
 * browser context, cache disabled). The figures are printed and written to
 * tests/test-artifacts/console/size-and-load.json. What is asserted holds on a busy machine too:
 * the bytes a cold load transfers (exact, whatever the load), and the fastest of the 5 loads
 * under the design's second unless the machine is overloaded (BUSY_LOAD_PER_CPU); the median is
 * reported (on a 2-core machine shared with other work it has gone over a second).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import {
  buildConsole,
  chromiumPath,
  launchChromium,
  openConsolePage,
  SKIP_WITHOUT_CHROMIUM,
} from "./support/console-browser.ts";
import { type ConsoleSession, signInToConsole } from "./support/console-session.ts";
import { startServer, type TestServer } from "./support/server.ts";

setDefaultTimeout(120_000);

const distDir = resolve(import.meta.dir, "../apps/console/dist");
const artifactDir = resolve(import.meta.dir, "test-artifacts/console");
const COLD_LOADS = 5;
/** The design's bound (docs/console.md): the console loads in under a second on loopback. */
const LOAD_BUDGET_MS = 1_000;
/** What a cold load of the prompts screen may transfer: today ~320 KiB; the editor or the charts would add 150+ KiB. */
const LOAD_BUDGET_BYTES = 400 * 1024;
/**
 * Above this load average per CPU the machine is too busy for a time to mean anything about the
 * console (seen here: at ~6 per CPU the fastest load took 1.1 s): the time is then reported, not
 * judged. The bytes are judged always.
 */
const BUSY_LOAD_PER_CPU = 4;

interface Size {
  files: number;
  raw: number;
  gzip: number;
}

const sizeOf = (paths: string[]): Size =>
  paths.reduce(
    (sum, path) => {
      const bytes = readFileSync(path);
      return {
        files: sum.files + 1,
        raw: sum.raw + bytes.length,
        gzip: sum.gzip + Bun.gzipSync(bytes).length,
      };
    },
    { files: 0, raw: 0, gzip: 0 },
  );

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

/** index.html and what it names: its entry script and stylesheet (under /console/). */
function initialFiles(): string[] {
  const html = readFileSync(join(distDir, "index.html"), "utf8");
  const named = [...html.matchAll(/(?:src|href)="\/console\/([^"]+\.(?:js|css))"/g)].map(
    (match) => match[1]!,
  );
  expect(named.some((name) => name.endsWith(".js"))).toBe(true);
  expect(named.some((name) => name.endsWith(".css"))).toBe(true);
  return [join(distDir, "index.html"), ...named.map((name) => join(distDir, name))];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

if (!chromiumPath) console.warn(SKIP_WITHOUT_CHROMIUM);

// The page's globals that page.evaluate uses in the browser (tests/ is typed without the DOM).
declare const document: {
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null; offsetParent: unknown }>;
};

let server: TestServer;
let browser: Browser;
let session: ConsoleSession;

describe("the built console's size and load time", () => {
  const sizes: { total?: Size; initial?: Size } = {};

  beforeAll(() => {
    buildConsole();
  });

  test("size: the whole build, and the initial load (index.html, entry script, stylesheet), raw and gzip", () => {
    sizes.total = sizeOf(filesUnder(distDir));
    sizes.initial = sizeOf(initialFiles());
    console.log(
      `console size: total ${sizes.total.files} files ${kib(sizes.total.raw)} (gzip ${kib(sizes.total.gzip)}); initial load ${sizes.initial.files} files ${kib(sizes.initial.raw)} (gzip ${kib(sizes.initial.gzip)})`,
    );
    expect(sizes.initial.raw).toBeLessThan(sizes.total.raw);
    expect(sizes.initial.gzip).toBeLessThan(sizes.initial.raw);
  });

  describe.skipIf(!chromiumPath)("load time on loopback", () => {
    beforeAll(async () => {
      server = await startServer();
      session = await signInToConsole(server);
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await server?.dispose();
    });

    test(`navigation start → the prompts table on screen: ${COLD_LOADS} cold loads, the fastest under ${LOAD_BUDGET_MS} ms, each under ${LOAD_BUDGET_BYTES / 1024} KiB`, async () => {
      const loads: { ms: number; parsedMs: number; requests: number; bytes: number }[] = [];
      for (let load = 0; load < COLD_LOADS; load++) {
        const { page, context, errors, close } = await openConsolePage(browser, server, { session });
        const cdp = await context.newCDPSession(page);
        await cdp.send("Network.enable");
        await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
        let bytes = 0;
        let requests = 0;
        cdp.on("Network.loadingFinished", (event) => {
          requests += 1;
          bytes += event.encodedDataLength;
        });
        await page.goto(`${server.url}/console/prompts`, { waitUntil: "commit" });
        // performance.now() counts from the navigation's start (the page's time origin).
        const shown = await page.waitForFunction(
          () => {
            const row = Array.from(document.querySelectorAll("tbody tr th a")).find(
              (a) => a.textContent === "greet",
            );
            return row && row.offsetParent !== null ? performance.now() : false;
          },
          undefined,
          { polling: "raf" },
        );
        // When the document was parsed (its script and stylesheet loaded): the rest is the app's own work.
        const parsedMs = Number(
          await page.evaluate('performance.getEntriesByType("navigation")[0]?.domContentLoadedEventEnd ?? 0'),
        );
        loads.push({
          ms: Math.round(Number(await shown.jsonValue())),
          parsedMs: Math.round(parsedMs),
          requests,
          bytes,
        });
        expect(errors).toEqual([]);
        await close();
      }
      const result = {
        measuredAt: new Date().toISOString(),
        machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", loadAverage: loadavg()[0] },
        database: server.dialect,
        size: sizes,
        loads,
        medianMs: median(loads.map((load) => load.ms)),
        medianParsedMs: median(loads.map((load) => load.parsedMs)),
      };
      mkdirSync(artifactDir, { recursive: true });
      writeFileSync(join(artifactDir, "size-and-load.json"), `${JSON.stringify(result, null, 2)}\n`);
      console.log(
        `console load (prompts table visible), ${COLD_LOADS} cold loads: ${loads.map((load) => `${load.ms} ms`).join(", ")}; median ${result.medianMs} ms (document parsed at ${result.medianParsedMs} ms); ${loads[0]!.requests} requests, ${kib(loads[0]!.bytes)} transferred`,
      );
      for (const load of loads) expect(load.bytes).toBeLessThan(LOAD_BUDGET_BYTES);
      const busy = loadavg()[0]! > BUSY_LOAD_PER_CPU * cpus().length;
      if (busy) console.warn(`load average ${loadavg()[0]!.toFixed(1)}: too busy to judge the load time`);
      else expect(Math.min(...loads.map((load) => load.ms))).toBeLessThan(LOAD_BUDGET_MS);
    });
  });
});
