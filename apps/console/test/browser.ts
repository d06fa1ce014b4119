/** Debian's Chromium through playwright-core for the console's browser tests (no browser download). */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const chromiumPath = [
  process.env.CHROMIUM_PATH,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
].find((path): path is string => Boolean(path && existsSync(path)));

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

/** A page that fails the test on any uncaught page error (collected, read with `errors`). */
export async function openPage(browser: Browser, viewport = { width: 1280, height: 800 }) {
  const page: Page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, errors };
}
