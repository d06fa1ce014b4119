import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readPromptFiles } from "./prompt-files.ts";
import { DEMO_WORKFLOWS_DIR, seedDemoWorkflows } from "./seed-demo-workflows.ts";
import { EXAMPLE_PROMPTS_DIR } from "./server.ts";

/** Records what the seed pushes (the real push is checked by cli/workflows.test.ts on the same files). */
function recordingPush() {
  const calls: Array<{ tenantId: string; files: unknown[] }> = [];
  const push = async (tenantId: string, files: unknown[]) => {
    calls.push({ tenantId, files });
    return files.map((file, index) => ({
      slug: (file as { slug: string }).slug,
      version: index + 1,
      id: crypto.randomUUID(),
      tags: [],
      created: true,
    }));
  };
  return { push, calls };
}

describe("seedDemoWorkflows", () => {
  test("pushes every file of workflows/ into the tenant in one push", async () => {
    const { push, calls } = recordingPush();
    const seeded = await seedDemoWorkflows({ push }, "tenant-1");
    const files = readPromptFiles(DEMO_WORKFLOWS_DIR);
    expect(calls).toEqual([{ tenantId: "tenant-1", files }]);
    expect(seeded.map((workflow) => workflow.slug)).toContain("support-triage");
  });

  test("an empty folder pushes nothing", async () => {
    const empty = mkdtempSync(join(tmpdir(), "promptrun-no-workflows-"));
    try {
      const { push, calls } = recordingPush();
      expect(await seedDemoWorkflows({ push }, "tenant-1", empty)).toEqual([]);
      expect(calls).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test("the demo workflow's prompts are demo prompts on the development model", () => {
    const prompts = new Map(
      readPromptFiles(EXAMPLE_PROMPTS_DIR).map((file) => {
        const prompt = file as { slug: string; model: string; tags?: string[] };
        return [prompt.slug, prompt];
      }),
    );
    for (const file of readPromptFiles(DEMO_WORKFLOWS_DIR)) {
      for (const step of (file as { steps: Array<{ prompt?: string }> }).steps) {
        if (step.prompt === undefined) continue;
        const [slug, tag] = step.prompt.split("@");
        const prompt = prompts.get(slug ?? "");
        expect(prompt?.model).toStartWith("dev:");
        if (tag !== undefined) expect(prompt?.tags).toContain(tag);
      }
    }
  });
});
