import { describe, expect, test } from "bun:test";
import { createBackend } from "./backend.ts";

const thread = "0196f3c1-1f0e-7a3b-8b7c-1234567890ab";

/** Records each request and answers from a table (no server: happy-dom owns fetch here). */
function recordingFetch(answer: (url: string, init: RequestInit) => Response) {
  const requests: Array<{ url: string; init: RequestInit }> = [];
  const fetchFunction = async (url: string, init: RequestInit) => {
    requests.push({ url, init });
    return answer(url, init);
  };
  return { requests, fetchFunction };
}

describe("createBackend", () => {
  test("posts to the app's routes with JSON and extra headers, and validates the answers", async () => {
    const { requests, fetchFunction } = recordingFetch((url) =>
      url.endsWith("/token")
        ? Response.json({
            token: "t",
            expiresAt: "2030-01-01T00:00:00.000Z",
            url: `http://x/stream/${thread}`,
          })
        : Response.json({ id: thread, thread }, { status: 202 }),
    );
    const backend = createBackend({
      baseUrl: "/api/",
      fetch: fetchFunction,
      headers: () => ({ "x-csrf": "abc" }),
    });
    expect((await backend.getStreamToken(thread)).token).toBe("t");
    expect(await backend.createRun({ thread, message: "hi" })).toEqual({ id: thread, thread });
    expect(requests.map((request) => `${request.init.method} ${request.url}`)).toEqual([
      "POST /api/token",
      "POST /api/chat",
    ]);
    expect(JSON.parse(String(requests[1]?.init.body))).toEqual({ thread, message: "hi" });
    expect(requests[1]?.init.headers).toMatchObject({ "content-type": "application/json", "x-csrf": "abc" });
  });

  test("custom paths, and error bodies become ApiError values", async () => {
    const { requests, fetchFunction } = recordingFetch(() =>
      Response.json({ error: "no such run" }, { status: 404 }),
    );
    const backend = createBackend({
      baseUrl: "https://app.example",
      paths: { run: (id) => `/v2/runs/${id}` },
      fetch: fetchFunction,
    });
    const error = await backend.getRun(thread).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ApiError", status: 404, code: "not_found", message: "no such run" });
    expect(requests[0]?.url).toBe(`https://app.example/v2/runs/${thread}`);
  });

  test("an answer of the wrong shape is an invalid_response error", async () => {
    const { fetchFunction } = recordingFetch(() => Response.json({ token: 1 }));
    const error = await createBackend({ baseUrl: "/api", fetch: fetchFunction })
      .getStreamToken(thread)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "invalid_response" });
  });

  test("submitToolOutputs posts {toolOutputs} to /runs/<id>/tool-outputs (or a custom path)", async () => {
    const { requests, fetchFunction } = recordingFetch(() =>
      Response.json({ id: thread, thread }, { status: 202 }),
    );
    const outputs = [{ toolCallId: "call_1", output: { time: "12:00" } }];
    const backend = createBackend({ baseUrl: "/api", fetch: fetchFunction });
    expect(await backend.submitToolOutputs?.(thread, outputs)).toEqual({ id: thread, thread });
    const custom = createBackend({
      baseUrl: "/api",
      paths: { toolOutputs: (id) => `/answers/${id}` },
      fetch: fetchFunction,
    });
    await custom.submitToolOutputs?.(thread, outputs);
    expect(requests.map((request) => `${request.init.method} ${request.url}`)).toEqual([
      `POST /api/runs/${thread}/tool-outputs`,
      `POST /api/answers/${thread}`,
    ]);
    expect(JSON.parse(String(requests[0]?.init.body))).toEqual({ toolOutputs: outputs });
  });

  test("workflow runs: POST /workflow-runs and GET /workflow-runs/<id> (or custom paths), checked", async () => {
    const { requests, fetchFunction } = recordingFetch((url) =>
      url.endsWith("/workflow-runs")
        ? Response.json({ id: thread, thread }, { status: 202 })
        : Response.json({ id: thread, status: "pending" }),
    );
    const backend = createBackend({ baseUrl: "/api", fetch: fetchFunction });
    expect(await backend.createWorkflowRun?.({ workflow: "triage", ticket: "help" })).toEqual({
      id: thread,
      thread,
    });
    const error = await backend.getWorkflowRun?.(thread).catch((caught: unknown) => caught);
    // A body that is not a whole WorkflowRun is refused.
    expect(error).toMatchObject({ code: "invalid_response" });
    const custom = createBackend({
      baseUrl: "/api",
      paths: { workflowRun: (id) => `/flows/${id}` },
      fetch: fetchFunction,
    });
    await custom.getWorkflowRun?.(thread).catch(() => {});
    expect(requests.map((request) => `${request.init.method} ${request.url}`)).toEqual([
      "POST /api/workflow-runs",
      `GET /api/workflow-runs/${thread}`,
      `GET /api/flows/${thread}`,
    ]);
    expect(JSON.parse(String(requests[0]?.init.body))).toEqual({ workflow: "triage", ticket: "help" });
  });
});
