import { beforeEach, describe, expect, test } from "bun:test";
import type { PromptDefinition } from "@promptrun/contract";
import type { Store } from "../../ports.ts";
import { addTenant, at, createMemoryStore, manualClock, push } from "../../testing/index.ts";
import type { WorkflowRecord, WorkflowStore, WorkflowVersionRecord } from "../ports.ts";
import { createWorkflowService } from "./workflow-service.ts";

/**
 * The definition half of WorkflowStore, as ports.ts states it (tenant-scoped, identical content
 * creates nothing, tags follow the pushed version). Kept here until the memory store has it.
 */
function fakeWorkflowDefinitions(): WorkflowStore {
  const workflows = new Map<string, WorkflowRecord>();
  const versions: WorkflowVersionRecord[] = [];
  const key = (tenantId: string, slug: string) => `${tenantId}/${slug}`;
  const versionsOf = (tenantId: string, slug: string) =>
    versions.filter((version) => version.tenantId === tenantId && version.slug === slug);
  const tagsOf = async (versionId: string) => {
    const version = versions.find((candidate) => candidate.id === versionId);
    const workflow = version && workflows.get(key(version.tenantId, version.slug));
    if (!version || !workflow) return [];
    return Object.keys(workflow.tags)
      .filter((tag) => workflow.tags[tag] === version.version)
      .sort();
  };
  const definitions: Partial<WorkflowStore> = {
    async pushVersion(input) {
      const existing = workflows.get(key(input.tenantId, input.slug));
      const workflow: WorkflowRecord = existing ?? {
        id: input.newWorkflowId,
        tenantId: input.tenantId,
        slug: input.slug,
        latestVersion: 0,
        description: null,
        tags: {},
        createdAt: input.at,
        updatedAt: input.at,
      };
      workflows.set(key(input.tenantId, input.slug), workflow);
      const latest = versionsOf(input.tenantId, input.slug).at(-1);
      let version = latest;
      if (latest?.contentHash !== input.contentHash) {
        version = {
          id: input.newVersionId,
          workflowId: workflow.id,
          tenantId: input.tenantId,
          slug: input.slug,
          version: workflow.latestVersion + 1,
          definition: structuredClone(input.definition),
          contentHash: input.contentHash,
          createdAt: input.at,
        };
        versions.push(version);
        Object.assign(workflow, {
          latestVersion: version.version,
          description: input.definition.description ?? null,
          updatedAt: input.at,
        });
      }
      const pushed = version as WorkflowVersionRecord;
      for (const tag of input.tags) workflow.tags[tag] = pushed.version;
      return { version: pushed, created: pushed !== latest, tags: await tagsOf(pushed.id) };
    },
    async setTag(tenantId, slug, number, tag) {
      const version = versionsOf(tenantId, slug).find((candidate) => candidate.version === number);
      const workflow = workflows.get(key(tenantId, slug));
      if (!version || !workflow) return null;
      workflow.tags[tag] = number;
      return version;
    },
    async resolveVersion(tenantId, slug, selector) {
      const all = versionsOf(tenantId, slug);
      const tagged = workflows.get(key(tenantId, slug))?.tags;
      const found =
        selector.kind === "latest"
          ? all.at(-1)
          : selector.kind === "number"
            ? all.find((version) => version.version === selector.version)
            : selector.kind === "id"
              ? all.find((version) => version.id === selector.id)
              : all.find((version) => tagged?.[selector.tag] === version.version);
      return found ?? null;
    },
    tagsOf,
    async getWorkflow(tenantId, slug) {
      return workflows.get(key(tenantId, slug)) ?? null;
    },
    async listWorkflows(tenantId, page) {
      const items = [...workflows.values()]
        .filter((workflow) => workflow.tenantId === tenantId)
        .sort((a, b) => a.slug.localeCompare(b.slug));
      return { items: items.slice(0, page.limit), nextCursor: null };
    },
    async listVersions(tenantId, slug, page) {
      return { items: versionsOf(tenantId, slug).reverse().slice(0, page.limit), nextCursor: null };
    },
  };
  return definitions as WorkflowStore;
}

const classifyPrompt: PromptDefinition = {
  model: "dev:echo",
  params: {},
  inputs: { text: { type: "string" }, language: { type: "string", default: "en" } },
  messages: [{ role: "user", content: "{{text}}" }],
  output: {
    format: "json_schema",
    name: "category",
    schema: { type: "object", properties: { category: { type: "string" } } },
  },
};
const answerPrompt: PromptDefinition = {
  model: "dev:echo",
  params: {},
  inputs: {
    ticket: { type: "string" },
    context: { type: "string" },
    note: { type: "string", optional: true },
  },
  messages: [{ role: "user", content: "{{ticket}} {{context}}" }],
};

const triage = () => ({
  slug: "triage",
  description: "Classify, then answer with the docs.",
  inputs: { ticket: { type: "string" }, labels: { type: "array" } },
  steps: [
    { id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } },
    { id: "docs", retrieve: { knowledgeBase: "help", query: "{{inputs.ticket}}", topK: 3 } },
    {
      id: "answer",
      prompt: "answer",
      when: "steps.classify.outputJson.category != 'spam'",
      inputs: { ticket: "{{inputs.ticket}}", context: "{{steps.docs.text}}" },
    },
  ],
  output: "{{steps.answer.output}}",
  tags: ["production"],
});

let store: Store;
let tenantId: string;
let otherTenantId: string;
let service: ReturnType<typeof createWorkflowService>;

beforeEach(async () => {
  store = { ...createMemoryStore(), workflows: fakeWorkflowDefinitions() };
  const clock = manualClock(at(10));
  service = createWorkflowService({ store, clock });
  tenantId = (await addTenant(store, "acme")).id;
  otherTenantId = (await addTenant(store, "globex")).id;
  await push(store, tenantId, "classify", "classify", ["production"], 0, classifyPrompt);
  await push(store, tenantId, "answer", "answer", [], 0, answerPrompt);
  await store.knowledge.createKnowledgeBase({
    id: Bun.randomUUIDv7(),
    tenantId,
    slug: "help",
    description: null,
    embeddingModel: "dev:hash",
    chunking: { maxTokens: 256, overlap: 32 },
    createdAt: at(0),
  });
});

/** The triage file with other steps (and no output template, which names triage's steps). */
const withSteps = (steps: unknown[], extra: Record<string, unknown> = {}) => {
  const { output: _output, ...file } = triage();
  return { ...file, ...extra, steps };
};

describe("workflow push", () => {
  test("a valid file becomes version 1 with its tags; the same content again creates nothing", async () => {
    const [first] = await service.push(tenantId, [triage()]);
    expect(first).toMatchObject({ slug: "triage", version: 1, tags: ["production"], created: true });
    const [again] = await service.push(tenantId, [triage()]);
    expect(again).toMatchObject({ version: 1, id: first?.id, created: false });
    const [changed] = await service.push(tenantId, [{ ...triage(), description: "v2" }]);
    expect(changed).toMatchObject({ version: 2, created: true, tags: ["production"] });

    const read = await service.get(tenantId, "triage", "production");
    expect(read).toMatchObject({ version: 2, description: "v2", output: "{{steps.answer.output}}" });
    expect(read.steps.map((step) => step.id)).toEqual(["classify", "docs", "answer"]);
    expect(read.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect((await service.get(tenantId, "triage", "1")).tags).toEqual([]);
    expect((await service.get(tenantId, "triage", first?.id as string)).version).toBe(1);
  });

  test.each([
    [
      "a cycle",
      [
        { id: "a", prompt: "answer", inputs: { ticket: "{{steps.b.output}}", context: "" } },
        { id: "b", prompt: "answer", inputs: { ticket: "{{steps.a.output}}", context: "" } },
      ],
      "workflow 'triage': steps: cycle a → b → a",
    ],
    [
      "a self reference",
      [{ id: "a", prompt: "answer", when: "steps.a.output == ''", inputs: { ticket: "", context: "" } }],
      "workflow 'triage': steps[0].when: step 'a' refers to itself",
    ],
    [
      "a when reaching globals",
      [{ id: "a", prompt: "answer", when: "process.env.HOME == ''", inputs: { ticket: "", context: "" } }],
      "workflow 'triage': steps[0].when: expression does not compile: Unknown variable: process",
    ],
    [
      "a when looping in a loop",
      [
        {
          id: "a",
          prompt: "answer",
          when: "inputs.labels.all(x, inputs.labels.all(y, x == y))",
          inputs: { ticket: "", context: "" },
        },
      ],
      "workflow 'triage': steps[0].when: expression may not nest all() inside another comprehension",
    ],
    [
      "a when with a regular expression",
      [
        {
          id: "a",
          prompt: "answer",
          when: "inputs.ticket.matches('(a+)+$')",
          inputs: { ticket: "", context: "" },
        },
      ],
      "workflow 'triage': steps[0].when: expression may not use matches() (regular expressions are not allowed)",
    ],
    [
      "an undeclared workflow input",
      [{ id: "a", prompt: "answer", inputs: { ticket: "{{inputs.secret}}", context: "" } }],
      "workflow 'triage': steps[0].inputs: input 'secret' is not declared in the workflow's inputs",
    ],
  ])("refuses %s with a 400 naming the path", async (_, steps, message) => {
    const error = await service.push(tenantId, [withSteps(steps)]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "invalid", message });
    expect(await store.workflows.getWorkflow(tenantId, "triage")).toBeNull();
  });

  test("1,000 steps are refused by the contract's maximum, before anything else", async () => {
    const steps = Array.from({ length: 1_000 }, (_, index) => ({
      id: `s${index}`,
      retrieve: { knowledgeBase: "help", query: "x" },
    }));
    await expect(service.push(tenantId, [withSteps(steps)])).rejects.toMatchObject({
      code: "invalid",
      message: "workflow 'triage': steps: a workflow has at most 100 steps",
    });
  });

  test("a file over 256 KiB of JSON is refused", async () => {
    const big = withSteps(triage().steps, { description: "x".repeat(9_000) });
    const inputs = Object.fromEntries(
      Array.from({ length: 40 }, (_, index) => [
        `i${index}`,
        { type: "string", description: "y".repeat(9_000) },
      ]),
    );
    await expect(
      service.push(tenantId, [{ ...big, inputs: { ...big.inputs, ...inputs } }]),
    ).rejects.toMatchObject({
      code: "invalid",
      message: expect.stringMatching(/^workflow 'triage': the file is \d+ bytes as JSON; at most 262144/),
    });
  });

  test("a schema error names the file and the field", async () => {
    await expect(
      service.push(tenantId, [
        withSteps([{ id: "a", prompt: "answer", retrieve: { knowledgeBase: "help", query: "q" } }]),
      ]),
    ).rejects.toMatchObject({
      message: "workflow 'triage': steps[0]: a step has exactly one of prompt or retrieve",
    });
    await expect(service.push(tenantId, [{ steps: [] }])).rejects.toMatchObject({
      message: expect.stringContaining("workflow '#1': slug: required"),
    });
  });

  test("another tenant's prompt reads exactly like an unknown one", async () => {
    await push(store, otherTenantId, "secret-prompt", "theirs", ["production"], 0, answerPrompt);
    const theirs = withSteps([
      { id: "a", prompt: "secret-prompt@production", inputs: { ticket: "", context: "" } },
    ]);
    const unknown = withSteps([
      { id: "a", prompt: "never-pushed@production", inputs: { ticket: "", context: "" } },
    ]);
    await expect(service.push(tenantId, [theirs])).rejects.toMatchObject({
      code: "invalid",
      message: "workflow 'triage': steps[0].prompt: prompt 'secret-prompt' not found",
    });
    await expect(service.push(tenantId, [unknown])).rejects.toMatchObject({
      message: "workflow 'triage': steps[0].prompt: prompt 'never-pushed' not found",
    });
    // The other tenant pushes the same file fine: its own prompt resolves.
    const [pushed] = await service.push(otherTenantId, [{ ...theirs, steps: [theirs.steps[0]] }]);
    expect(pushed?.created).toBe(true);
  });

  test("a reference to a missing tag or version of a known prompt says which", async () => {
    await expect(
      service.push(tenantId, [
        withSteps([{ id: "a", prompt: "answer@beta", inputs: { ticket: "", context: "" } }]),
      ]),
    ).rejects.toMatchObject({
      message: "workflow 'triage': steps[0].prompt: prompt 'answer' has no version or tag 'beta'",
    });
    await expect(
      service.push(tenantId, [
        withSteps([{ id: "a", prompt: "answer@7", inputs: { ticket: "", context: "" } }]),
      ]),
    ).rejects.toMatchObject({
      message: "workflow 'triage': steps[0].prompt: prompt 'answer' has no version 7",
    });
  });

  test("every required input of the resolved version must be filled; defaults and optional ones may be left out", async () => {
    const unfilled = withSteps([{ id: "reply", prompt: "answer", inputs: { ticket: "{{inputs.ticket}}" } }]);
    await expect(service.push(tenantId, [unfilled])).rejects.toMatchObject({
      code: "invalid",
      message:
        "workflow 'triage': steps[0].inputs: step 'reply' does not fill input 'context' of prompt 'answer' (version 1)",
    });
    // classify's `language` has a default, answer's `note` is optional: neither is needed.
    const [pushed] = await service.push(tenantId, [triage()]);
    expect(pushed?.created).toBe(true);
  });

  test("a step input the prompt does not declare is refused", async () => {
    const extra = withSteps([
      { id: "a", prompt: "classify@production", inputs: { text: "", shell: "{{inputs.ticket}}" } },
    ]);
    await expect(service.push(tenantId, [extra])).rejects.toMatchObject({
      message:
        "workflow 'triage': steps[0].inputs.shell: prompt 'classify@production' (version 1) declares no input 'shell'",
    });
  });

  test("a retrieve step's knowledge base must exist in the tenant", async () => {
    const steps = [{ id: "docs", retrieve: { knowledgeBase: "help", query: "{{inputs.ticket}}" } }];
    await expect(service.push(otherTenantId, [withSteps(steps)])).rejects.toMatchObject({
      message: "workflow 'triage': steps[0].retrieve.knowledgeBase: knowledge base 'help' not found",
    });
  });

  test("one bad file leaves the others unpushed; a slug twice is refused; an unknown tenant is 404", async () => {
    const good = { ...triage(), slug: "good" };
    const bad = withSteps([{ id: "a", prompt: "nope" }], { slug: "bad" });
    await expect(service.push(tenantId, [good, bad])).rejects.toMatchObject({ code: "invalid" });
    expect(await store.workflows.getWorkflow(tenantId, "good")).toBeNull();
    await expect(service.push(tenantId, [good, good])).rejects.toMatchObject({
      message: "workflow 'good' appears more than once in one push",
    });
    await expect(service.push(Bun.randomUUIDv7(), [good])).rejects.toMatchObject({ code: "not_found" });
    await expect(service.push(tenantId, [])).rejects.toMatchObject({ code: "invalid" });
  });
});

describe("workflow tag, get, list, versions", () => {
  beforeEach(async () => {
    await service.push(tenantId, [triage()]);
    await service.push(tenantId, [{ ...triage(), description: "second", tags: [] }]);
  });

  test("tag moves a tag to a version; bad tags, bodies, versions and slugs are 400/404", async () => {
    expect(await service.tag(tenantId, "triage", "stable", { version: 2 })).toMatchObject({
      slug: "triage",
      version: 2,
      tags: ["stable"],
      created: false,
    });
    expect((await service.get(tenantId, "triage", "stable")).description).toBe("second");
    await expect(service.tag(tenantId, "triage", "latest", { version: 1 })).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(service.tag(tenantId, "triage", "stable", { version: "1" })).rejects.toMatchObject({
      code: "invalid",
      message: expect.stringContaining("version"),
    });
    await expect(service.tag(tenantId, "triage", "stable", { version: 9 })).rejects.toMatchObject({
      code: "not_found",
      message: "workflow 'triage' has no version 9",
    });
    await expect(service.tag(otherTenantId, "triage", "stable", { version: 1 })).rejects.toMatchObject({
      code: "not_found",
      message: "workflow 'triage' not found",
    });
  });

  test("get says what is missing like prompts do; another tenant's workflow is not found", async () => {
    await expect(service.get(tenantId, "triage", "beta")).rejects.toMatchObject({
      code: "not_found",
      message: "workflow 'triage' has no version or tag 'beta'",
    });
    await expect(service.get(otherTenantId, "triage", "latest")).rejects.toMatchObject({
      message: "workflow 'triage' not found",
    });
    expect((await service.get(tenantId, "triage", "latest")).version).toBe(2);
  });

  test("list gives summaries with tags; versions newest first with each version's tags", async () => {
    const listed = await service.list(tenantId, { limit: 50 });
    expect(listed.items).toEqual([
      expect.objectContaining({
        slug: "triage",
        latestVersion: 2,
        description: "second",
        tags: { production: 1 },
      }),
    ]);
    expect((await service.list(otherTenantId, { limit: 50 })).items).toEqual([]);
    const versions = await service.versions(tenantId, "triage", { limit: 50 });
    expect(versions.items.map((version) => [version.version, version.tags])).toEqual([
      [2, []],
      [1, ["production"]],
    ]);
    await expect(service.versions(otherTenantId, "triage", { limit: 50 })).rejects.toMatchObject({
      code: "not_found",
    });
  });
});
