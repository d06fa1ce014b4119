/**
 * The Webhooks and Environments & keys screens (docs/console.md screens 7 and 8) in Chromium,
 * against a real in-process Promptrun: webhooks delivered to a real local receiver, runs through
 * the real engine and the scripted model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

/** Browser steps wait on real deliveries and runs: more than bun test's default 5 s. */
const TEST_TIMEOUT_MS = 60_000;
const artifacts = resolve(import.meta.dir, "../test-artifacts");

let harness: ConsoleHarness;
let browser: Browser;
const pages: Page[] = [];

/** A local webhook receiver answering `status`, recording what it got. */
function startReceiver() {
  const received: { headers: Headers; body: string }[] = [];
  const state = { status: 500 };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      received.push({ headers: request.headers, body: await request.text() });
      return new Response(state.status === 200 ? "ok" : "receiver down", { status: state.status });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hooks/promptrun`, received, state, server };
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** POST a run as the harness tenant (the way an app would, not through the console). */
async function createRun(slug: string, body: Record<string, unknown>) {
  const response = await fetch(`${harness.promptrun.url}/api/v1/prompts/${slug}/latest/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${harness.promptrun.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect({ status: response.status, body: response.status === 202 ? null : await response.text() }).toEqual({
    status: 202,
    body: null,
  });
  return (await response.json()) as { id: string };
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
const expectedSignature = (secret: string, headers: Headers, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64"))
    .update(`${headers.get("webhook-id")}.${headers.get("webhook-timestamp")}.${body}`)
    .digest("base64")}`;

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axe.source });
  return page.evaluate(async () => {
    const { violations } = await (window as unknown as { axe: typeof axe }).axe.run();
    return violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
      );
  });
}

/** No serious axe violation and no sideways page scroll, at 1280×800 and at phone width. */
async function expectAccessibleAtBothSizes(page: Page) {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(viewport);
    expect(await seriousViolations(page)).toEqual([]);
    // Wide tables scroll in their own box; the page itself never scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      viewport.width,
    );
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function open(path: string) {
  const opened = await openPage(browser);
  pages.push(opened.page);
  await opened.page.goto(`${harness.url}/console${path}`);
  await opened.page.getByRole("heading", { level: 1 }).waitFor();
  return opened;
}

describe.skipIf(!chromiumPath)("webhooks and environments screens", () => {
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    harness = await startConsoleHarness({
      prompts: [
        {
          slug: "greet",
          inputs: { name: { type: "string" } },
          messages: [{ role: "user", content: "Say hello to {{name}}." }],
          tags: ["production"],
        },
        {
          slug: "signed",
          messages: [{ role: "user", content: "Sign as {{env.SIGNATURE}}." }],
        },
      ],
      // The receiver is on 127.0.0.1; one attempt per delivery, so only Redeliver sends it again.
      config: { allowPrivateUrls: true, webhookRetrySchedule: [] },
    });
    browser = await launchChromium();
  });
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.close();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  }, TEST_TIMEOUT_MS);

  test(
    "webhooks: create (secret once), a failed delivery with its response code, redeliver, disable, delete",
    async () => {
      const receiver = startReceiver();
      try {
        const { page, errors } = await open("/webhooks");
        await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
        expect(await page.getByText("run.requires_action").first().isVisible()).toBe(true);

        await page.getByLabel("Environment", { exact: true }).selectOption("production");
        await page.getByLabel("URL").fill(receiver.url);
        await page.getByRole("checkbox", { name: /run\.requires_action/ }).check();
        await page.getByRole("checkbox", { name: /prompt\.tag\.moved/ }).check();
        await page.getByRole("button", { name: "Add webhook" }).click();

        const secretBox = page.getByTestId("secret-once-value");
        await secretBox.waitFor();
        const secret = (await secretBox.textContent()) ?? "";
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
        expect(await page.getByText("it is shown only this once").isVisible()).toBe(true);
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await page.getByRole("button", { name: "Copy" }).click();
        await page.getByText("Copied to the clipboard.").waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

        const card = page.getByRole("article", { name: receiver.url });
        await card.waitFor();
        expect(await page.getByRole("heading", { name: "Environment production" }).isVisible()).toBe(true);
        for (const event of ["run.completed", "run.failed", "run.requires_action", "prompt.tag.moved"])
          expect(await card.getByText(event, { exact: true }).isVisible()).toBe(true);
        expect(await card.getByText("prompt.version.created", { exact: true }).count()).toBe(0);
        expect(await card.getByText("Enabled", { exact: true }).isVisible()).toBe(true);
        await card.getByText("No deliveries yet.").waitFor();

        await page.getByRole("button", { name: "Done, I saved it" }).click();
        expect(await page.getByTestId("secret-once-value").count()).toBe(0);

        // The receiver fails: the run's delivery fails with its code, and the streak counts it.
        receiver.state.status = 500;
        const run = await createRun("greet", { inputs: { name: "Ada" } });
        await waitUntil(() => receiver.received.length === 1, "the first delivery");
        const first = receiver.received[0]!;
        expect(first.headers.get("webhook-signature")).toBe(
          expectedSignature(secret, first.headers, first.body),
        );
        expect(JSON.parse(first.body)).toMatchObject({ type: "run.completed", data: { id: run.id } });

        const failedCell = card.getByRole("cell", { name: "500", exact: true });
        await failedCell.waitFor({ timeout: 15_000 });
        expect(await card.getByText("Failed", { exact: true }).count()).toBe(1);
        expect(await card.getByRole("link", { name: `run ${run.id.slice(0, 8)}` }).getAttribute("href")).toBe(
          `/console/runs/${run.id}`,
        );
        await card.getByText("1 failed delivery in a row").waitFor({ timeout: 15_000 });

        // The receiver recovers: Redeliver sends the same delivery again and shows how it went.
        receiver.state.status = 200;
        await card.getByRole("button", { name: /^Redeliver run\.completed delivery/ }).click();
        await card.getByText(/Redelivery: Delivered: HTTP 200 in \d+ ms\./).waitFor({ timeout: 15_000 });
        expect(receiver.received).toHaveLength(2);
        expect(receiver.received[1]!.headers.get("webhook-id")).toBe(first.headers.get("webhook-id"));
        expect(await card.getByRole("cell", { name: "200", exact: true }).isVisible()).toBe(true);
        expect(await card.getByText("Delivered", { exact: true }).count()).toBe(1);
        expect(await card.getByText("#2", { exact: true }).isVisible()).toBe(true);
        await card.getByText("0 (last delivery succeeded or none yet)").waitFor({ timeout: 15_000 });

        await page.screenshot({ path: resolve(artifacts, "webhooks.png"), fullPage: true });
        await expectAccessibleAtBothSizes(page);

        // The secret was shown once: after a reload it is nowhere in the page.
        await page.reload();
        await card.waitFor();
        expect(await page.content()).not.toContain(secret);

        // Disable: the API says so, and a redelivery is refused with the server's words.
        await card.getByRole("button", { name: `Disable the webhook ${receiver.url}` }).click();
        await card.getByText("Disabled", { exact: true }).waitFor();
        await card.getByRole("button", { name: /^Redeliver run\.completed delivery/ }).click();
        await card
          .getByRole("alert")
          .getByText("the webhook is disabled; enable it before redelivering")
          .waitFor();
        await card.getByRole("button", { name: `Enable the webhook ${receiver.url}` }).click();
        await card.getByText("Enabled", { exact: true }).waitFor();

        // Delete asks first; cancelling keeps it.
        await card.getByRole("button", { name: `Delete the webhook ${receiver.url}` }).click();
        const dialog = page.getByRole("dialog", { name: "Delete this webhook?" });
        await dialog.waitFor();
        await dialog.getByRole("button", { name: "Cancel" }).click();
        expect(await card.isVisible()).toBe(true);
        await card.getByRole("button", { name: `Delete the webhook ${receiver.url}` }).click();
        await dialog.getByRole("button", { name: "Delete webhook" }).click();
        await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
        expect(await harness.promptrun.promptrun.services.webhooks.list(harness.promptrun.tenantId)).toEqual(
          [],
        );
        expect(errors).toEqual([]);
      } finally {
        receiver.server.stop(true);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "webhooks: a URL the API refuses is shown in its words",
    async () => {
      const { page } = await open("/webhooks");
      await page.getByLabel("URL").fill("ftp://example.com/hook");
      await page.getByRole("button", { name: "Add webhook" }).click();
      // The browser's own check (type=url) lets ftp through; the API refuses it.
      await page.getByRole("alert").waitFor();
      expect(await page.getByRole("alert").textContent()).toContain("url");
      expect(await page.getByTestId("secret-once-value").count()).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "webhooks: a tenant with many endpoints loads every list (tRPC batches stay within the server's limit)",
    async () => {
      const { services } = harness.promptrun.promptrun;
      const tenantId = harness.promptrun.tenantId;
      const created = [];
      for (let index = 0; index < 12; index++)
        created.push(
          await services.webhooks.create(tenantId, {
            environment: "production",
            url: `http://127.0.0.1:9/hook-${index}`,
          }),
        );
      try {
        const { page, errors } = await open("/webhooks");
        await page.getByRole("article", { name: "http://127.0.0.1:9/hook-11" }).waitFor();
        await page.waitForFunction(
          () =>
            document.querySelectorAll(".webhook-deliveries .hint, .webhook-deliveries [role=alert]")
              .length === 12,
        );
        expect(await page.getByRole("alert").allTextContents()).toEqual([]);
        expect(await page.getByText("No deliveries yet.").count()).toBe(12);
        expect(errors).toEqual([]);
      } finally {
        for (const { webhook } of created) await services.webhooks.delete(tenantId, webhook.id);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "environments: variable names only, values never in the page nor in an API answer",
    async () => {
      const value = "sig-value-4b1d9e-never-shown";
      const { page, errors } = await open("/environments");
      const answers: string[] = [];
      page.on("response", async (response) => {
        if (new URL(response.url()).pathname.startsWith("/trpc/"))
          answers.push(await response.text().catch(() => ""));
      });

      const addEnvironment = page.getByRole("form", { name: "Add an environment" });
      await addEnvironment.getByLabel("Name").fill("staging");
      await addEnvironment.getByRole("button", { name: "Add environment" }).click();
      const staging = page.getByRole("article", { name: "staging" });
      await staging.waitFor();
      await staging.getByText("No variables.").waitFor();

      await staging.getByLabel("Name").fill("signature");
      expect(await staging.getByLabel("Name").inputValue()).toBe("SIGNATURE");
      await staging.getByLabel("Value").fill(value);
      await staging.getByRole("button", { name: "Set variable" }).click();
      await staging.getByRole("rowheader", { name: "SIGNATURE" }).waitFor();
      expect(await staging.getByLabel("Value").inputValue()).toBe("");
      expect(await page.content()).not.toContain(value);

      // The value was stored: a run in staging sends it to the model.
      const script = harness.promptrun.script;
      const requestsBefore = script.requests.length;
      await createRun("signed", { inputs: {}, environment: "staging" });
      await script.waitForRequests(requestsBefore + 1);
      expect(JSON.stringify(script.requests[requestsBefore]?.body)).toContain(`Sign as ${value}.`);

      // A bad name is explained before sending.
      await staging.getByLabel("Name").fill("9LIVES");
      await staging.getByText("Use UPPER_CASE").waitFor();
      expect(await staging.getByRole("button", { name: "Set variable" }).isDisabled()).toBe(true);
      await staging.getByLabel("Name").fill("");

      await page.reload();
      await staging.getByRole("rowheader", { name: "SIGNATURE" }).waitFor();
      expect(await page.content()).not.toContain(value);
      await page.screenshot({ path: resolve(artifacts, "environments.png"), fullPage: true });
      await expectAccessibleAtBothSizes(page);

      await staging.getByRole("button", { name: "Delete SIGNATURE from staging" }).click();
      const dialog = page.getByRole("dialog", { name: "Delete SIGNATURE?" });
      await dialog.getByRole("button", { name: "Delete variable" }).click();
      await staging.getByText("No variables.").waitFor();
      expect(answers.length).toBeGreaterThan(0);
      for (const answer of answers) expect(answer).not.toContain(value);
      expect(errors).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "API keys: created key shown once, gone after reload; revoking another key",
    async () => {
      const { page, errors } = await open("/environments");
      const ownPrefix = harness.promptrun.apiKey.slice(0, 16);
      await page.getByRole("rowheader", { name: `${ownPrefix}…` }).waitFor();

      await page.getByRole("button", { name: "Create API key" }).click();
      const shown = page.getByTestId("secret-once-value");
      await shown.waitFor();
      const key = (await shown.textContent()) ?? "";
      expect(key).toMatch(/^pr_live_[A-Za-z0-9_-]{43}$/);
      expect(await page.getByText("it is shown only this once").isVisible()).toBe(true);
      const prefix = key.slice(0, 16);
      const row = page.getByRole("row", { name: new RegExp(`^${prefix}…`) });
      await row.waitFor();
      expect(await row.getByText("Active").isVisible()).toBe(true);
      expect(await row.getByText("never").isVisible()).toBe(true);

      const callWith = (apiKey: string) =>
        fetch(`${harness.promptrun.url}/api/v1/prompts`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect((await callWith(key)).status).toBe(200);

      await page.reload();
      await row.waitFor();
      expect(await page.content()).not.toContain(key);
      expect(await page.getByTestId("secret-once-value").count()).toBe(0);
      // Used once above: its last use is shown now.
      expect(await row.getByText("never").count()).toBe(0);

      await row.getByRole("button", { name: `Revoke the key ${prefix}…` }).click();
      const dialog = page.getByRole("dialog", { name: `Revoke the key ${prefix}…?` });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("signed out too");
      await dialog.getByRole("button", { name: "Revoke key" }).click();
      await row.getByText("Revoked").waitFor();
      expect(await row.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
      expect((await callWith(key)).status).toBe(401);
      // The harness's own key (this console's) still works.
      expect((await callWith(harness.promptrun.apiKey)).status).toBe(200);
      expect(
        await page
          .getByRole("row", { name: new RegExp(`^${ownPrefix}…`) })
          .getByText("Active")
          .isVisible(),
      ).toBe(true);
      expect(errors).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
