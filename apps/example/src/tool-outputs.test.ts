/**
 * The example's client tool: `lookup_order` of the `order-status` prompt answered by the page's
 * own code and passed on by the example's backend (`POST /api/runs/:id/tool-outputs`), against a
 * real in-process Promptrun on the keyless dev:echo model (`/call <tool> <json>`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { subscribeToThread } from "@promptrun/client";
import type { StreamEnvelope } from "@promptrun/contract";
import { startPromptrun, type TestPromptrun } from "@promptrun/testing";
import { type ExampleServer, startExampleServer } from "./example-server.ts";
import { loadOrderStatusPrompt } from "./test-support/order-status-prompt.ts";
import { answerToolCall } from "./web/client-tools.ts";

let promptrun: TestPromptrun;
let example: ExampleServer;

beforeAll(async () => {
  promptrun = await startPromptrun({ prompts: [await loadOrderStatusPrompt()] });
  example = startExampleServer({
    promptrunUrl: promptrun.url,
    apiKey: promptrun.apiKey,
    prompt: { slug: "order-status", version: "latest" },
  });
});
afterAll(async () => {
  await example.stop();
  await promptrun.stop();
});

const post = (path: string, body: unknown) =>
  fetch(`${example.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("the page's answer to a client tool call", () => {
  test("the run pauses on /call, the backend passes the page's output on, the run answers with it", async () => {
    const thread = crypto.randomUUID();
    const { token, url } = (await (await post("/api/token", { thread })).json()) as {
      token: string;
      url: string;
    };
    const events: StreamEnvelope[] = [];
    let output: unknown;
    for await (const event of subscribeToThread({ url: `${example.url}${url}`, token })) {
      events.push(event);
      if (event.type === "ready") {
        const created = await post("/api/chat", {
          thread,
          message: '/call lookup_order {"number":"A-1001"}',
        });
        expect(created.status).toBe(202);
      }
      if (event.type === "run.requires_action") {
        const [call] = event.data.requiredAction.toolCalls;
        expect(call).toMatchObject({ name: "lookup_order", arguments: { number: "A-1001" } });
        output = answerToolCall(call!);
        const answered = await post(`/api/runs/${event.data.runId}/tool-outputs`, {
          toolOutputs: [{ toolCallId: call!.id, output }],
        });
        expect(answered.status).toBe(202);
      }
      if (event.type === "run.completed" || event.type === "run.failed") break;
    }
    const end = events.at(-1);
    expect(end?.type).toBe("run.completed");
    // dev:echo answers with the tool's output (its JSON).
    expect(end?.type === "run.completed" && JSON.parse(end.data.output)).toEqual(output);
  });
});
