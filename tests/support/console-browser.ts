/**
 * The web console in a real browser against the real server (docs/console.md): Debian's Chromium
 * through playwright-core (never a browser download), the console built before the server serves
 * it, axe-core's serious and critical violations, and the screenshots docs/console.md embeds.
 */
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import axe from "axe-core";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { browserCookie, type ConsoleSession } from "./console-session.ts";
import type { TestServer } from "./server.ts";

const repoRoot = resolve(import.meta.dir, "../..");

// The page's globals that the functions below use in the browser (tests/ is typed without the DOM).
declare const document: { documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number; axe: typeof axe };

export const chromiumPath = [
  process.env.CHROMIUM_PATH,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
].find((path): path is string => Boolean(path && existsSync(path)));

export const SKIP_WITHOUT_CHROMIUM =
  "SKIPPING the console's browser tests against the real server: no Chromium binary (apt-get install -y chromium, or set CHROMIUM_PATH).";

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-dev-shm-usage",
    ],
  });

/**
 * Builds apps/console/dist when a source is newer than the build (`--if-stale`, as `npm start`
 * does): the server serves the console from there.
 */
export function buildConsole(): void {
  const build = Bun.spawnSync(["bun", resolve(repoRoot, "scripts/console-build.ts"), "--if-stale"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(`console build failed: ${build.stderr.toString()}`);
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page (a test expects none). */
  errors: string[];
  close(): Promise<void>;
}

/**
 * A page in a browser context of its own (its own cookies), signed in when `session` is given
 * (the cookie the server set, put into the browser: docs/console.md "Signing in from a test").
 */
export async function openConsolePage(
  browser: Browser,
  server: Pick<TestServer, "url">,
  options: { session?: Pick<ConsoleSession, "token">; viewport?: { width: number; height: number } } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: options.viewport ?? DESKTOP });
  if (options.session) await context.addCookies([browserCookie(server, options.session)]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  return { context, page, errors, close: () => context.close() };
}

/**
 * axe-core's serious and critical violations on the page as it is now: `rule: targets`. axe is
 * evaluated through the DevTools protocol: the console's Content-Security-Policy (rightly) refuses
 * an injected inline script.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  return page.evaluate(async () => {
    const { violations } = await window.axe.run();
    return violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );
  });
}

/** Sideways scroll of the whole page in pixels (0 when it fits the viewport: wide tables scroll in their own box). */
export const sidewaysOverflow = (page: Page): Promise<number> =>
  page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));

/**
 * Where screenshots go: docs/console/ with UPDATE_CONSOLE_SCREENSHOTS=1 (the pictures
 * docs/console.md embeds, committed), else tests/test-artifacts/console/ (git-ignored), so an
 * ordinary test run leaves the working tree clean.
 */
const screenshotDir =
  process.env.UPDATE_CONSOLE_SCREENSHOTS === "1"
    ? resolve(repoRoot, "docs/console")
    : resolve(repoRoot, "tests/test-artifacts/console");

/** A 1280×800 picture of the page as it is now, named for its screen. */
export async function screenshot(page: Page, screen: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: resolve(screenshotDir, `${screen}.png`) });
}
