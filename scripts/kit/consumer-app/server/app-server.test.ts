import { afterAll, beforeAll, expect, test } from "bun:test";
import { startPromptrun, type TestPromptrun } from "@promptrun/testing";
import { startAppServer } from "./app-server";

let promptrun: TestPromptrun;
let app: ReturnType<typeof startAppServer>;

beforeAll(async () => {
  promptrun = await startPromptrun({
    prompts: [
      {
        slug: "chat",
        inputs: { message: { type: "string" } },
        messages: [{ role: "user", content: "{{message}}" }],
      },
    ],
  });
  app = startAppServer({ promptrunUrl: promptrun.url, apiKey: promptrun.apiKey });
});
afterAll(async () => {
  await app.stop();
  await promptrun.stop();
});

test("the backend starts a run that the scripted model answers", async () => {
  promptrun.script.reply("Hello from the scripted model");
  const thread = crypto.randomUUID();
  const response = await fetch(`${app.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ thread, message: "hi" }),
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  let run = { status: "pending", output: null as string | null };
  for (let attempt = 0; attempt < 200 && run.status === "pending"; attempt++) {
    await Bun.sleep(25);
    run = (await (await fetch(`${app.url}/api/runs/${id}`)).json()) as typeof run;
  }
  expect(run.status).toBe("completed");
  expect(run.output).toBe("Hello from the scripted model");
});

test("bad input gets a 400 with an error body", async () => {
  const response = await fetch(`${app.url}/api/chat`, { method: "POST", body: "{}" });
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({ error: "thread and message are required" });
});
