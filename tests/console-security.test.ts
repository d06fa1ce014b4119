/**
 * The web console's security claims (docs/console.md "Security") against the real server in
 * Debian's Chromium, on SQLite or Postgres (PROMPTRUN_E2E_DATABASE): the API key is nowhere in the
 * browser after sign-in; cookie requests from another origin or without the console header are
 * refused; a revoked key's session ends; one tenant's session never shows another's data;
 * environment values never reach the browser.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import {
  buildConsole,
  chromiumPath,
  launchChromium,
  openConsolePage,
  SKIP_WITHOUT_CHROMIUM,
} from "./support/console-browser.ts";
import { signInToConsole } from "./support/console-session.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

setDefaultTimeout(60_000);

if (!chromiumPath) console.warn(SKIP_WITHOUT_CHROMIUM);

// The page's globals that page.evaluate uses in the browser (tests/ is typed without the DOM).
declare const document: { cookie: string; getElementById(id: string): { submit(): void } };
declare const indexedDB: { databases(): Promise<unknown[]> };

let server: TestServer;
let browser: Browser;

/** Everything the page keeps that a script could read: storage, script-visible cookies, IndexedDB names. */
const readableState = (page: Page) =>
  page.evaluate(async () => ({
    localStorage: JSON.stringify({ ...localStorage }),
    sessionStorage: JSON.stringify({ ...sessionStorage }),
    cookie: document.cookie,
    indexedDb: JSON.stringify(await indexedDB.databases()),
  }));

/**
 * Every response body the page receives from now on (text), for "never reaches the browser"
 * checks. Live streams (SSE) never end while the page is open: their events are checked on the
 * page instead.
 */
function recordResponses(page: Page) {
  const bodies: Promise<string>[] = [];
  page.on("response", (response) => {
    if ((response.headers()["content-type"] ?? "").startsWith("text/event-stream")) return;
    bodies.push(
      response.body().then(
        (body) => body.toString("utf8"),
        () => "",
      ),
    );
  });
  return { all: () => Promise.all(bodies) };
}

const runCount = async (key: string) => {
  const response = await api(server, "/api/v1/promptruns?limit=200", { key });
  return ((await response.json()) as { items: unknown[] }).items.length;
};

describe.skipIf(!chromiumPath)("console security on the real server", () => {
  beforeAll(async () => {
    buildConsole();
    server = await startServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test("after sign-in the API key is in no storage, no readable cookie and not in the page", async () => {
    const { page, context, errors, close } = await openConsolePage(browser, server);
    const responses = recordResponses(page);
    await page.goto(`${server.url}/console`);
    await page.getByLabel("API key").fill(server.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    // A few screens later, still nothing.
    for (const link of ["Prompts", "Runs", "Environments & keys"]) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.locator("h1").first().waitFor();
    }
    await page.getByRole("rowheader", { name: `${server.apiKey.slice(0, 16)}…` }).waitFor();

    const state = await readableState(page);
    const [session] = (await context.cookies()).filter((cookie) => cookie.name === "promptrun_console");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });
    for (const kept of Object.values(state)) {
      expect(kept).not.toContain(server.apiKey);
      expect(kept).not.toContain(session!.value);
    }
    expect(state.cookie).toBe("");
    expect(state.localStorage).toBe("{}");
    expect(state.sessionStorage).toBe("{}");
    expect(await page.content()).not.toContain(server.apiKey);
    // Only the key's display prefix ever comes back from the server.
    for (const body of await responses.all()) expect(body).not.toContain(server.apiKey);
    expect(errors).toEqual([]);
    await close();
  });

  test("a cookie request from another origin, or without x-promptrun-console, is refused (403)", async () => {
    const session = await signInToConsole(server);
    const before = await runCount(server.apiKey);
    const runGreet = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/v1/prompts/greet/production/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ inputs: { name: "Mallory" } }),
      });
    const crossOrigin = await runGreet({ ...session.headers, origin: "http://evil.example" });
    expect(crossOrigin.status).toBe(403);
    expect(((await crossOrigin.json()) as { error: string }).error).toContain("another origin");
    const { "x-promptrun-console": _, ...withoutHeader } = session.headers;
    const noHeader = await runGreet(withoutHeader);
    expect(noHeader.status).toBe(403);
    expect(((await noHeader.json()) as { error: string }).error).toContain("x-promptrun-console");
    // tRPC the same.
    const trpc = await fetch(`${server.url}/trpc/environment.list`, {
      headers: { ...session.headers, origin: "http://evil.example" },
    });
    expect(trpc.status).toBe(403);
    // The same cookie from the right origin with the header works.
    expect((await runGreet(session.headers)).status).toBe(202);

    // In a browser: a page of another origin on the same host (same site, so the Strict cookie
    // goes along) posts a form and a fetch to the API; both are refused, no run is made.
    const evil = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response(
          `<!doctype html><title>evil</title><form id="f" method="post" enctype="text/plain" action="${server.url}/api/v1/prompts/greet/production/runs"><input name='{"inputs":{"name":"x"},"pad":"' value='"}'></form>`,
          { headers: { "content-type": "text/html" } },
        ),
    });
    try {
      const { page, close } = await openConsolePage(browser, server, { session });
      await page.goto(`http://127.0.0.1:${evil.port}/`);
      const fetched = page.waitForRequest((request) => request.method() === "POST");
      await page.evaluate(
        (url) =>
          fetch(url, {
            method: "POST",
            mode: "no-cors",
            credentials: "include",
            headers: { "content-type": "text/plain" },
            body: '{"inputs":{"name":"x"}}',
          }).catch(() => null),
        `${server.url}/api/v1/prompts/greet/production/runs`,
      );
      expect((await (await fetched).response())?.status()).toBe(403);
      const [posted] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === "POST"),
        page.evaluate(() => document.getElementById("f").submit()),
      ]);
      expect(posted.request().headers().cookie ?? (await posted.request().allHeaders()).cookie).toContain(
        session.token,
      );
      expect(posted.status()).toBe(403);
      await close();
    } finally {
      evil.stop(true);
    }
    // Only the one accepted run above was made.
    expect(await runCount(server.apiKey)).toBe(before + 1);
  });

  test("a revoked key's session stops working: the console shows the sign-in page", async () => {
    const created = await server.cli<{ apiKey: string }>("keys", "create", server.tenantId);
    const session = await signInToConsole(server, created.json.apiKey);
    const { page, errors, close } = await openConsolePage(browser, server, { session });
    await page.goto(`${server.url}/console/prompts`);
    await page.getByRole("row", { name: /greet/ }).waitFor();

    const revoked = await server.cli<{ revoked: number }>("keys", "revoke", created.json.apiKey);
    expect(revoked.json.revoked).toBe(1);
    // The open page's next call gets 401: the sign-in page shows, without a reload.
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.getByRole("heading", { name: "Sign in to Promptrun" }).waitFor();
    // And on a reload.
    await page.reload();
    await page.getByRole("heading", { name: "Sign in to Promptrun" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0);
    expect((await fetch(`${server.url}/api/v1/prompts`, { headers: session.headers })).status).toBe(401);
    expect(errors).toEqual([]);
    await close();
  });

  test("a session of tenant A never shows tenant B's data", async () => {
    const tenantB = await server.cli<{ tenant: { id: string }; apiKey: string }>(
      "tenants",
      "create",
      "Tenant B",
    );
    const keyB = tenantB.json.apiKey;
    const slugB = "tenant-b-only-prompt";
    const secretText = "text-of-tenant-b-7f3a";
    const pushed = await api(server, "/api/v1/prompts", {
      key: keyB,
      method: "POST",
      json: { slug: slugB, model: "dev:echo", messages: [{ role: "user", content: secretText }] },
    });
    expect(pushed.status).toBe(201);
    const promptB = (await pushed.json()) as { id: string };
    const createdB = await api(server, `/api/v1/prompts/${slugB}/latest/runs`, {
      key: keyB,
      method: "POST",
      json: { inputs: {} },
    });
    expect(createdB.status).toBe(202);
    const runB = await waitForRun(
      { url: server.url, apiKey: keyB },
      ((await createdB.json()) as { id: string }).id,
    );
    expect(runB.status).toBe("completed");

    // A run of A too, so A's runs table has rows to look among.
    const createdA = await api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      json: { inputs: { name: "Ada" } },
    });
    const runA = await waitForRun(server, ((await createdA.json()) as { id: string }).id);

    const sessionA = await signInToConsole(server);
    expect(sessionA.tenant.id).toBe(server.tenantId);
    const { page, errors, close } = await openConsolePage(browser, server, { session: sessionA });
    const responses = recordResponses(page);
    await page.goto(`${server.url}/console/prompts`);
    await page.getByRole("row", { name: /greet/ }).waitFor();
    expect(await page.content()).not.toContain(slugB);

    await page.goto(`${server.url}/console/runs`);
    await page.locator(`tr[data-run-id="${runA.id as string}"]`).waitFor();
    expect(await page.locator(`tr[data-run-id="${runB.id}"]`).count()).toBe(0);

    await page.goto(`${server.url}/console/runs/${runB.id}`);
    expect(await page.getByRole("alert").first().textContent()).toContain("not found");
    await page.goto(`${server.url}/console/prompts/${slugB}`);
    expect(await page.getByRole("alert").first().textContent()).toContain("not found");
    await page.goto(`${server.url}/console/threads/${runB.thread as string}`);
    expect(await page.getByRole("alert").first().textContent()).toContain("not found");
    // Its live tail listens on A's thread of that id: a new run of B on its thread shows nothing.
    await page.getByText("Live: new events appear as they happen.").waitFor();
    const nextB = await api(server, `/api/v1/prompts/${slugB}/latest/runs`, {
      key: keyB,
      method: "POST",
      json: { inputs: {}, thread: runB.thread },
    });
    expect(nextB.status).toBe(202);
    const nextRunB = await waitForRun(
      { url: server.url, apiKey: keyB },
      ((await nextB.json()) as { id: string }).id,
    );
    expect(nextRunB.thread).toBe(runB.thread);
    await Bun.sleep(500);
    expect(await page.locator(".event-log .event-type").allTextContents()).toEqual(["ready"]);
    expect(await page.content()).not.toContain(secretText);
    await page.goto(`${server.url}/console/costs`);
    await page.getByRole("table", { name: "Usage per prompt" }).waitFor();

    // Nothing of B in any answer A's console got (a "not found" repeats only the id it was asked for).
    const ofB = [secretText, tenantB.json.tenant.id, "Tenant B", promptB.id];
    for (const body of await responses.all()) for (const text of ofB) expect(body).not.toContain(text);
    expect(errors).toEqual([]);
    await close();
  });

  test("environment values never reach the browser", async () => {
    const value = "env-value-9c41e2-must-stay-on-the-server";
    const set = await server.cli<{ keys: string[] }>(
      "envs",
      "set",
      server.tenantId,
      "production",
      `SHIPPING_TOKEN=${value}`,
    );
    expect(set.code).toBe(0);
    expect(set.json.keys).toContain("SHIPPING_TOKEN");

    const session = await signInToConsole(server);
    const { page, errors, close } = await openConsolePage(browser, server, { session });
    const responses = recordResponses(page);
    await page.goto(`${server.url}/console/environments`);
    await page
      .getByRole("article", { name: "production" })
      .getByRole("rowheader", { name: "SHIPPING_TOKEN" })
      .waitFor();
    expect(await page.content()).not.toContain(value);
    // Other screens that list environments (webhooks, runs filters) neither.
    for (const link of ["Webhooks", "Runs", "Playground"]) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.locator("h1").first().waitFor();
      await page.waitForLoadState("networkidle");
      expect(await page.content()).not.toContain(value);
    }
    const bodies = await responses.all();
    expect(bodies.some((body) => body.includes("SHIPPING_TOKEN"))).toBe(true);
    for (const body of bodies) expect(body).not.toContain(value);
    expect(errors).toEqual([]);
    await close();
  });
});
