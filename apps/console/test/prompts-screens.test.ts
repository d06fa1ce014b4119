/**
 * The Prompts list and the prompt detail screen in Chromium against a real in-process Promptrun
 * (test/dev-harness.ts): the table with tags, latest version, runs and cost of the last 24 h; the
 * YAML editor's problems at their lines (YAML syntax, the contract's schema, the server's 400);
 * saving a new version; the diff of two versions; a tag move behind its confirmation, and the
 * tag's history.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

// A browser test takes seconds (`bun test` alone would stop it at 5 s).
setDefaultTimeout(60_000);

const artifacts = resolve(import.meta.dir, "../test-artifacts");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

interface AxeResult {
  violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown[] }> }>;
}
interface Axe {
  run(context: Document): Promise<AxeResult>;
}

/** Serious and critical axe-core violations of the page as it is now (rule id and first target). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: Axe }).axe;
    const result = await axe.run(document);
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      target: JSON.stringify(violation.nodes[0]?.target ?? []),
    }));
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} ${violation.target}`);
}

/** Replaces the text of the CodeMirror editor labelled by `heading` (typed as a user pastes it). */
async function replaceEditorText(page: Page, heading: string, text: string) {
  const content = page.getByRole("textbox", { name: heading });
  await content.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

const api = (harness: ConsoleHarness, path: string, init: RequestInit = {}) =>
  fetch(`${harness.promptrun.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${harness.promptrun.apiKey}`, "content-type": "application/json" },
  });

const GREET_V2 = `slug: greet
description: Greets someone
model: script:any
inputs:
  name:
    type: string
messages:
  - role: user
    content: Say a warm hello to {{name}}.
`;

if (!chromiumPath) console.warn("SKIPPING the prompt screens' browser tests: no Chromium binary.");

describe.skipIf(!chromiumPath)("prompts list (no prompts)", () => {
  let harness: ConsoleHarness;
  let browser: Browser;
  beforeAll(async () => {
    harness = await startConsoleHarness();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("an empty tenant is told how to push a prompt, and a new prompt written here is saved", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts`);
    await page.getByRole("heading", { name: "No prompts yet" }).waitFor();
    expect(await page.locator(".empty-state").textContent()).toContain("prompts push");
    await page.goto(`${harness.url}/console/playground`);
    await page.getByRole("heading", { name: "No prompts to run yet" }).waitFor();
    expect(await page.locator(".empty-state").textContent()).toContain("prompts push");
    await page.getByRole("link", { name: "write a new prompt" }).click();
    await page.getByRole("heading", { name: "New prompt file (YAML)" }).waitFor();
    await replaceEditorText(page, "New prompt file (YAML)", GREET_V2.replace("slug: greet", "slug: hello"));
    await page.getByRole("button", { name: "Save as new version" }).click();
    await page.waitForURL(/\/console\/prompts\/hello$/);
    await page.getByRole("heading", { name: "hello", level: 1 }).waitFor();
    const stored = (await (await api(harness, "/prompts/hello/latest")).json()) as {
      version: number;
      messages: unknown;
    };
    expect(stored.version).toBe(1);
    expect(stored.messages).toEqual([{ role: "user", content: "Say a warm hello to {{name}}." }]);
    expect(errors).toEqual([]);
  });
});

describe.skipIf(!chromiumPath)("prompts list and prompt detail", () => {
  let harness: ConsoleHarness;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    harness = await startConsoleHarness({
      prompts: [
        {
          slug: "greet",
          description: "Greets someone",
          inputs: { name: { type: "string" } },
          messages: [{ role: "user", content: "Say hello to {{name}}." }],
          tags: ["production", "staging"],
        },
        {
          slug: "summarize",
          inputs: { text: { type: "string" } },
          messages: [{ role: "user", content: "Summarize: {{text}}" }],
        },
      ],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("the table shows each prompt with its latest version, tags, and runs and cost of the last 24 h", async () => {
    // One finished run of greet: 10 input + 3 output tokens at $1 / $2 per million.
    harness.promptrun.script.reply("Hello there, Ada");
    const created = await api(harness, "/prompts/greet/production/runs", {
      method: "POST",
      body: JSON.stringify({ inputs: { name: "Ada" } }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    for (let tries = 0; tries < 100; tries += 1) {
      const run = (await (await api(harness, `/promptruns/${id}`)).json()) as { status: string };
      if (run.status !== "pending") break;
      await Bun.sleep(50);
    }

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts`);
    const greet = page.getByRole("row", { name: /greet/ });
    // The runs and cost columns fill in when the usage answer arrives, after the rows.
    await greet.getByText("$0.000016").waitFor();
    const cells = await greet.locator("td, th").allTextContents();
    expect(cells.slice(0, 6)).toEqual([
      "greet",
      "Greets someone",
      "v1",
      "production → v1staging → v1",
      "1",
      "$0.000016",
    ]);
    const summarize = await page
      .getByRole("row", { name: /summarize/ })
      .locator("td, th")
      .allTextContents();
    expect(summarize.slice(0, 6)).toEqual(["summarize", "—", "v1", "none", "0", "$0.00"]);
    await page.screenshot({ path: `${artifacts}/prompts.png` });
    expect(await seriousViolations(page)).toEqual([]);

    await greet.getByRole("link", { name: "greet", exact: true }).click();
    await page.getByRole("heading", { name: "greet", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/prompts/greet");
    expect(errors).toEqual([]);
  });

  test("the editor marks a YAML error and a schema error at their lines, and the server's refusal at its field", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts/greet`);
    const editor = page.getByRole("textbox", { name: "Edit the prompt file" });
    await editor.waitFor();
    expect(await editor.textContent()).toContain("content: Say hello to {{name}}.");
    const problems = page.getByRole("list", { name: "Problems in the prompt file" });
    const markedLines = () =>
      page
        .locator(".cm-content .cm-line")
        .evaluateAll((lines) =>
          lines.flatMap((line, index) =>
            line.querySelector(".cm-lintRange-error, .cm-lintPoint-error") ? [index + 1] : [],
          ),
        );

    // YAML syntax: a value that is itself a mapping on line 3.
    await replaceEditorText(
      page,
      "Edit the prompt file",
      "slug: greet\nmodel: script:any\ndescription: a: b\nmessages:\n  - role: user\n    content: hi\n",
    );
    await problems.waitFor();
    expect(await problems.textContent()).toBe("Line 3: Nested mappings are not allowed in compact mappings");
    expect(await markedLines()).toEqual([3]);
    expect(await page.getByRole("button", { name: "Save as new version" }).isDisabled()).toBe(true);

    // Schema: a tool name with a space, on line 8.
    await replaceEditorText(
      page,
      "Edit the prompt file",
      "slug: greet\nmodel: script:any\nmessages:\n  - role: user\n    content: hi\ntools:\n  - type: function\n    name: get weather\n    parameters: {}\n",
    );
    await page.getByText("Line 8: tools[0].name: must be 1 to 64 letters, digits, _ or -").waitFor();
    expect(await markedLines()).toEqual([8]);

    // Only the server knows the template's inputs: its 400 names messages[0].content, on line 5.
    await replaceEditorText(
      page,
      "Edit the prompt file",
      "slug: greet\nmodel: script:any\nmessages:\n  - role: user\n    content: Hello {{nobody}}\n",
    );
    await page.getByRole("button", { name: "Save as new version" }).click();
    await page.getByRole("alert").filter({ hasText: "undeclared input" }).waitFor();
    expect(await problems.textContent()).toBe(
      "Line 5: messages[0].content: template names undeclared input: nobody",
    );
    expect(await markedLines()).toEqual([5]);
    const versions = (await (await api(harness, "/prompts/greet/versions")).json()) as { items: unknown[] };
    expect(versions.items).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  test("saving a valid edit creates version 2; the diff of versions 1 and 2 shows the changed line", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts/greet`);
    await page.getByRole("textbox", { name: "Edit the prompt file" }).waitFor();
    await replaceEditorText(page, "Edit the prompt file", GREET_V2);
    await page.getByRole("button", { name: "Save as new version" }).click();
    await page.getByRole("status").filter({ hasText: "Saved as version 2 of greet." }).waitFor();

    const stored = (await (await api(harness, "/prompts/greet/2")).json()) as {
      messages: unknown;
      tags: string[];
    };
    expect(stored.messages).toEqual([{ role: "user", content: "Say a warm hello to {{name}}." }]);
    // Saving moved no tag: production still names version 1.
    expect(stored.tags).toEqual([]);
    await page
      .getByRole("row", { name: /version 2/ })
      .first()
      .waitFor();

    // The diff now compares version 1 with version 2.
    expect(await page.getByLabel("From", { exact: true }).inputValue()).toBe("1");
    expect(await page.getByLabel("To", { exact: true }).inputValue()).toBe("2");
    await page.getByText("1 changed place from version 1 to version 2.").waitFor();
    const left = page.getByRole("textbox", { name: "version 1", exact: true });
    const right = page.getByRole("textbox", { name: "version 2", exact: true });
    expect(await left.locator(".cm-changedLine").allTextContents()).toEqual([
      "    content: Say hello to {{name}}.",
    ]);
    expect(await right.locator(".cm-changedLine").allTextContents()).toEqual([
      "    content: Say a warm hello to {{name}}.",
    ]);
    expect(errors).toEqual([]);
  });

  test("moving production to version 2 asks to confirm naming versions 1 and 2; the tag history lists the move", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts/greet`);
    const production = page.getByRole("row", { name: /^production/ });
    await production.waitFor();
    expect(await production.getByLabel("Move production to").inputValue()).toBe("2");

    // Cancelled: nothing moves.
    await production.getByRole("button", { name: "Move production" }).click();
    const dialog = page.getByRole("dialog", { name: "Move production from version 1 to version 2?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(((await (await api(harness, "/prompts/greet")).json()) as { tags: unknown }).tags).toEqual({
      production: 1,
      staging: 1,
    });

    await production.getByRole("button", { name: "Move production" }).click();
    await dialog.waitFor();
    await page.screenshot({ path: `${artifacts}/prompt-detail-confirm.png` });
    await dialog.getByRole("button", { name: "Move tag" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByRole("row", { name: /^production version 2/ }).waitFor();
    expect(((await (await api(harness, "/prompts/greet")).json()) as { tags: unknown }).tags).toEqual({
      production: 2,
      staging: 1,
    });

    const history = page.getByRole("table", { name: "History of production" });
    await history.getByText("version 1 → version 2").waitFor();
    const rows = await history.locator("tbody tr").allTextContents();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain("version 1 → version 2");
    expect(rows[1]).toContain("created at version 1");
    // CodeMirror measures its lines once it is scrolled into view: do so before the full-page picture.
    for (const editor of await page.locator(".cm-editor").all()) await editor.scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${artifacts}/prompt-detail.png`, fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  test("a move refused because the tag moved meanwhile is shown in words; nothing is overwritten", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/prompts/greet`);
    const staging = page.getByRole("row", { name: /^staging/ });
    await staging.waitFor();
    // Someone else moves staging to version 2 after the page was loaded.
    const moved = await api(harness, "/prompts/greet/tags/staging", {
      method: "PUT",
      body: JSON.stringify({ version: 2, expectedVersion: 1 }),
    });
    expect(moved.status).toBe(200);
    await staging.getByLabel("Move staging to").selectOption("2");
    await staging.getByRole("button", { name: "Move staging" }).click();
    await page
      .getByRole("dialog", { name: "Move staging from version 1 to version 2?" })
      .getByRole("button", { name: "Move tag" })
      .click();
    const refusal = page.getByRole("alert").filter({ hasText: "staging" });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("2");
    expect(errors).toEqual([]);
  });

  test("the screens have no serious accessibility violations on a phone-width screen", async () => {
    const { page, errors } = await openPage(browser, { width: 390, height: 844 });
    await page.goto(`${harness.url}/console/prompts`);
    await page.getByRole("row", { name: /greet/ }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${harness.url}/console/prompts/greet`);
    await page.getByRole("textbox", { name: "Edit the prompt file" }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
