import { describe, expect, test } from "bun:test";
import { errorCodes, streamEventTypes, webhookEventTypeSchema } from "@promptrun/contract";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildOpenApiDocument } from "./build-openapi-document.ts";
import { createComponentValidator } from "./component-validator.ts";
import type { completedJsonRunExample, requiresActionRunExample } from "./prompt-components.ts";
import { completedWorkflowRunExample } from "./workflow-operations.ts";

const document = buildOpenApiDocument({ serverUrl: "http://127.0.0.1:3000" });
const json = JSON.parse(JSON.stringify(document));

interface Operation {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
const operation = (path: string, method: string): Operation => json.paths[path][method];

const expectedStatuses: Array<[string, string, string, string[]]> = [
  [
    "/api/v1/knowledge-bases",
    "post",
    "create_knowledge_base",
    ["201", "400", "401", "403", "405", "409", "413", "415", "500"],
  ],
  ["/api/v1/knowledge-bases", "get", "list_knowledge_bases", ["200", "400", "401", "405", "500"]],
  ["/api/v1/knowledge-bases/{kb}", "get", "get_knowledge_base", ["200", "401", "404", "405", "500"]],
  ["/api/v1/knowledge-bases/{kb}", "delete", "delete_knowledge_base", ["204", "401", "404", "405", "500"]],
  [
    "/api/v1/knowledge-bases/{kb}/documents",
    "post",
    "add_document",
    ["202", "400", "401", "403", "404", "405", "413", "415", "429", "500"],
  ],
  [
    "/api/v1/knowledge-bases/{kb}/documents",
    "get",
    "list_documents",
    ["200", "400", "401", "404", "405", "500"],
  ],
  ["/api/v1/knowledge-bases/{kb}/documents/{id}", "get", "get_document", ["200", "401", "404", "405", "500"]],
  [
    "/api/v1/knowledge-bases/{kb}/documents/{id}",
    "delete",
    "delete_document",
    ["204", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/knowledge-bases/{kb}/search",
    "post",
    "search_knowledge_base",
    ["200", "400", "401", "403", "404", "405", "413", "415", "429", "500"],
  ],
  [
    "/api/v1/prompts/{slug}/tags/{tag}",
    "put",
    "set_prompt_tag",
    ["200", "400", "401", "403", "404", "405", "409", "413", "415", "500"],
  ],
  [
    "/api/v1/prompts/{slug}/tags/{tag}",
    "delete",
    "delete_prompt_tag",
    ["204", "400", "401", "403", "404", "405", "500"],
  ],
  [
    "/api/v1/prompts/{slug}/tags/{tag}/history",
    "get",
    "list_prompt_tag_history",
    ["200", "400", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/threads/{thread}/stream-token",
    "post",
    "create_stream_token",
    ["200", "401", "403", "404", "405", "429", "500"],
  ],
  [
    "/api/v1/prompts/{slug}/{version}/runs",
    "post",
    "create_prompt_run",
    ["202", "400", "401", "403", "404", "405", "409", "413", "415", "429", "500", "503"],
  ],
  [
    "/api/v1/prompts/{slug}/{version}/render",
    "post",
    "render_prompt",
    ["200", "400", "401", "404", "405", "413", "415", "429", "500"],
  ],
  [
    "/api/v1/threads/{thread}/messages",
    "get",
    "list_thread_messages",
    ["200", "400", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/threads/{thread}/messages",
    "post",
    "import_thread_messages",
    ["201", "400", "401", "403", "404", "405", "413", "415", "500"],
  ],
  ["/api/v1/promptruns", "get", "list_prompt_runs", ["200", "400", "401", "405", "500"]],
  ["/api/v1/promptruns/{id}", "get", "get_prompt_run", ["200", "401", "404", "405", "500"]],
  ["/api/v1/promptruns/{id}/messages", "get", "get_prompt_run_messages", ["200", "401", "404", "405", "500"]],
  ["/api/v1/usage", "get", "get_usage", ["200", "400", "401", "405", "500"]],
  ["/api/v1/promptruns/{id}/cancel", "post", "cancel_prompt_run", ["200", "401", "404", "405", "409", "500"]],
  [
    "/api/v1/promptruns/{id}/tool-outputs",
    "post",
    "submit_tool_outputs",
    ["202", "400", "401", "403", "404", "405", "409", "413", "415", "500"],
  ],
  ["/api/v1/openapi.json", "get", "get_openapi_document", ["200", "405"]],
  ["/stream/{thread}", "get", "subscribe_thread", ["200", "401", "403", "404", "405", "429", "500"]],
  ["/api/v1/prompts", "get", "list_prompts", ["200", "400", "401", "405", "500"]],
  [
    "/api/v1/prompts",
    "post",
    "push_prompt",
    ["200", "201", "400", "401", "403", "405", "409", "413", "415", "500"],
  ],
  ["/api/v1/prompts/{slug}", "get", "get_prompt", ["200", "401", "404", "405", "500"]],
  [
    "/api/v1/prompts/{slug}/versions",
    "get",
    "list_prompt_versions",
    ["200", "400", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/prompts/{slug}/{version}",
    "get",
    "get_prompt_version",
    ["200", "304", "401", "404", "405", "500"],
  ],
  ["/api/v1/workflows", "get", "list_workflows", ["200", "400", "401", "405", "500"]],
  [
    "/api/v1/workflows",
    "post",
    "push_workflow",
    ["200", "201", "400", "401", "403", "405", "413", "415", "500"],
  ],
  [
    "/api/v1/workflows/{slug}/versions",
    "get",
    "list_workflow_versions",
    ["200", "400", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/workflows/{slug}/{version}",
    "get",
    "get_workflow_version",
    ["200", "304", "401", "404", "405", "500"],
  ],
  [
    "/api/v1/workflows/{slug}/tags/{tag}",
    "put",
    "set_workflow_tag",
    ["200", "400", "401", "403", "404", "405", "413", "415", "500"],
  ],
  [
    "/api/v1/workflows/{slug}/{version}/runs",
    "post",
    "create_workflow_run",
    ["202", "400", "401", "403", "404", "405", "409", "413", "415", "429", "500", "503"],
  ],
  ["/api/v1/workflowruns", "get", "list_workflow_runs", ["200", "400", "401", "405", "500"]],
  ["/api/v1/workflowruns/{id}", "get", "get_workflow_run", ["200", "401", "404", "405", "500"]],
  [
    "/api/v1/workflowruns/{id}/cancel",
    "post",
    "cancel_workflow_run",
    ["200", "401", "404", "405", "409", "500"],
  ],
];

describe("buildOpenApiDocument", () => {
  test("OpenAPI 3.1, version 1.0.0, bearer security, the server URL", () => {
    expect(json.openapi).toBe("3.1.0");
    expect(json.info.version).toBe("1.0.0");
    expect(json.servers).toEqual([{ url: "http://127.0.0.1:3000" }]);
    expect(json.security).toEqual([{ apiKey: [] }]);
    expect(json.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(json.components.securitySchemes.streamToken).toMatchObject({ type: "http", scheme: "bearer" });
  });

  test("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test("every operation with every status code; every error response is an ErrorResponse", () => {
    expect(Object.keys(json.paths).sort()).toEqual(
      [...new Set(expectedStatuses.map(([path]) => path))].sort(),
    );
    for (const [path, method, operationId, statuses] of expectedStatuses) {
      const found = operation(path, method);
      expect(found.operationId).toBe(operationId);
      expect(Object.keys(found.responses).sort()).toEqual(statuses.sort());
      for (const status of statuses.filter((status) => Number(status) >= 400)) {
        expect(found.responses[status]?.content?.["application/json"]?.schema?.$ref).toBe(
          "#/components/schemas/ErrorResponse",
        );
      }
    }
  });

  test("every operation has a defined, described tag; 405 names Allow; 401 names WWW-Authenticate", () => {
    const tagNames = json.tags.map((tag: { name: string; description?: string }) => {
      expect(tag.description).toBeTruthy();
      return tag.name;
    });
    const allows: Record<string, string> = {
      "/api/v1/threads/{thread}/stream-token": "POST",
      "/api/v1/prompts/{slug}/{version}/runs": "POST",
      "/api/v1/prompts/{slug}/{version}/render": "POST",
      "/api/v1/promptruns": "GET, HEAD",
      "/api/v1/promptruns/{id}": "GET, HEAD",
      "/api/v1/promptruns/{id}/messages": "GET, HEAD",
      "/api/v1/usage": "GET, HEAD",
      "/api/v1/threads/{thread}/messages": "GET, HEAD, POST",
      "/api/v1/promptruns/{id}/cancel": "POST",
      "/api/v1/promptruns/{id}/tool-outputs": "POST",
      "/api/v1/openapi.json": "GET, HEAD",
      "/stream/{thread}": "GET, HEAD",
      "/api/v1/prompts": "GET, HEAD, POST",
      "/api/v1/prompts/{slug}": "GET, HEAD",
      "/api/v1/prompts/{slug}/versions": "GET, HEAD",
      "/api/v1/prompts/{slug}/{version}": "GET, HEAD",
      "/api/v1/prompts/{slug}/tags/{tag}": "PUT, DELETE",
      "/api/v1/prompts/{slug}/tags/{tag}/history": "GET, HEAD",
      "/api/v1/knowledge-bases": "GET, HEAD, POST",
      "/api/v1/knowledge-bases/{kb}": "GET, HEAD, DELETE",
      "/api/v1/knowledge-bases/{kb}/documents": "GET, HEAD, POST",
      "/api/v1/knowledge-bases/{kb}/documents/{id}": "GET, HEAD, DELETE",
      "/api/v1/knowledge-bases/{kb}/search": "POST",
      "/api/v1/workflows": "GET, HEAD, POST",
      "/api/v1/workflows/{slug}/versions": "GET, HEAD",
      "/api/v1/workflows/{slug}/{version}": "GET, HEAD",
      "/api/v1/workflows/{slug}/tags/{tag}": "PUT",
      "/api/v1/workflows/{slug}/{version}/runs": "POST",
      "/api/v1/workflowruns": "GET, HEAD",
      "/api/v1/workflowruns/{id}": "GET, HEAD",
      "/api/v1/workflowruns/{id}/cancel": "POST",
    };
    for (const [path, method] of expectedStatuses) {
      const found = json.paths[path][method];
      expect(found.tags.length).toBe(1);
      expect(tagNames).toContain(found.tags[0]);
      expect(found.responses["405"].headers.Allow).toMatchObject({
        required: true,
        schema: { const: allows[path] },
      });
      if (found.responses["401"])
        expect(found.responses["401"].headers["WWW-Authenticate"].required).toBe(true);
    }
  });

  test("the error code is the contract's fixed set; info has a license", () => {
    expect(json.components.schemas.ErrorResponse.properties.code.enum).toEqual([...errorCodes]);
    expect(json.components.schemas.ErrorResponse.required).toEqual(["error", "code"]);
    expect(json.info.license).toEqual({ name: "Proprietary" });
  });

  test("webhooks: every event, signed, with the payload of its type", () => {
    expect(Object.keys(json.webhooks).sort()).toEqual([...webhookEventTypeSchema.options].sort());
    interface WebhookOperation {
      tags: string[];
      parameters: Array<{ name: string; in: string; required: boolean }>;
      requestBody: { content: Record<string, { schema: { $ref: string } }> };
    }
    for (const [type, { post }] of Object.entries<{ post: WebhookOperation }>(json.webhooks)) {
      expect(post.tags).toEqual(["Webhooks"]);
      expect(post.parameters.map(({ name, in: where, required }) => [name, where, required])).toEqual([
        ["webhook-id", "header", true],
        ["webhook-timestamp", "header", true],
        ["webhook-signature", "header", true],
      ]);
      const ref = post.requestBody.content["application/json"]?.schema.$ref ?? "";
      const payload = json.components.schemas[ref.replace("#/components/schemas/", "")];
      expect(payload.properties.type).toMatchObject({ const: type });
      const data = {
        "run.completed": "PromptRun",
        "run.failed": "PromptRun",
        "run.requires_action": "PromptRun",
        "prompt.version.created": "PromptVersionCreatedData",
        "prompt.tag.moved": "PromptTagMovedData",
        "document.ready": "KnowledgeDocument",
        "document.failed": "KnowledgeDocument",
        "workflow.completed": "WorkflowRun",
        "workflow.failed": "WorkflowRun",
      }[type];
      expect(payload.properties.data).toEqual({ $ref: `#/components/schemas/${data}` });
    }
  });

  test("the contract's schemas become components, referenced from the operations", () => {
    for (const name of [
      "PromptRun",
      "CreatePromptRunRequest",
      "CreatePromptRunResponse",
      "StreamTokenResponse",
      "ErrorResponse",
      "TokenUsage",
      "Cost",
      "CostBlock",
      "StreamMessage",
      "RunTokenEvent",
    ]) {
      expect(json.components.schemas[name]).toBeDefined();
    }
    expect(
      operation("/api/v1/promptruns/{id}", "get").responses["200"]?.content?.["application/json"]?.schema,
    ).toEqual({
      $ref: "#/components/schemas/PromptRun",
    });
    const createRun = json.paths["/api/v1/prompts/{slug}/{version}/runs"].post;
    expect(createRun.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CreatePromptRunRequest",
    });
    expect(Object.keys(createRun.responses["202"].headers)).toContain("Location");
    expect(Object.keys(createRun.responses["429"].headers)).toEqual([
      "Retry-After",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    ]);
  });

  test("every $ref resolves inside the document", () => {
    const refs = JSON.stringify(json).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      const pointer = ref.slice('"$ref":"#/'.length, -1).split("/");
      const target = pointer.reduce<unknown>(
        (node, key) => (node as Record<string, unknown> | undefined)?.[key],
        json,
      );
      expect(target, ref).toBeDefined();
    }
  });

  test("the stream endpoint documents text/event-stream and every event name", () => {
    const stream = json.paths["/stream/{thread}"].get;
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(stream.security).toEqual([{ streamToken: [] }, { streamTokenQuery: [] }]);
    const eventNames = json.components.schemas.StreamMessage.anyOf.map(
      (message: { properties: { event: { const: string } } }) => message.properties.event.const,
    );
    expect(eventNames.sort()).toEqual([...streamEventTypes].sort());
    for (const name of streamEventTypes) expect(stream.description).toContain(`\`${name}\``);
  });

  test("component schemas validate as JSON Schema 2020-12", () => {
    const validator = createComponentValidator(document);
    const run = {
      id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ab",
      status: "completed",
      createdAt: "2025-01-01T00:00:00.000Z",
      finishedAt: "2025-01-01T00:00:01.000Z",
      output: "hi",
      error: null,
      tokenUsage: { input: 3, inputCached: 0, output: 1, reasoning: 0, total: 4 },
      cost: {
        success: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0, priced: false },
        retries: { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 },
        total: 0,
      },
      thread: "0196f3c1-1f0e-7a3b-8b7c-1234567890ac",
      channel: "default",
      prompt: { slug: "greet", version: 1, id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ad" },
      priority: "normal",
      environment: "production",
      metadata: {},
      startedAt: "2025-01-01T00:00:00.500Z",
      attempts: 1,
      outputJson: { reply: "hi" },
      finishReason: "stop",
      phase: null,
      requiredAction: null,
      steps: [],
      memory: { messages: 2, dropped: 0 },
      retrieval: [],
      citations: [],
      workflowRun: null,
    };
    expect(validator.validate("PromptRun", run)).toEqual([]);
    const stepRun = { ...run, workflowRun: { id: "0196f3c1-1f0e-7a3b-8b7c-1234567890b1", step: "classify" } };
    expect(validator.validate("PromptRun", stepRun)).toEqual([]);
    // Responses may gain fields later; clients must not break on them.
    expect(validator.validate("PromptRun", { ...run, futureField: 1 })).toEqual([]);
    expect(validator.validate("PromptRun", { ...run, status: "running" }).join()).toContain("/status");
    expect(validator.validate("PromptRun", { ...run, createdAt: "yesterday" }).join()).toContain(
      "/createdAt",
    );
    // Requests stay closed: unknown top-level fields are a 400.
    expect(validator.validate("CreatePromptRunRequest", { inputs: {} })).toEqual([]);
    expect(validator.validate("CreatePromptRunRequest", { inputs: {}, extra: 1 })).not.toEqual([]);
  });

  test("the run fields of structured output are described, with an example that validates", () => {
    const properties = json.components.schemas.PromptRun.properties;
    for (const field of ["outputJson", "finishReason", "phase", "memory"]) {
      expect(json.components.schemas.PromptRun.required).toContain(field);
      expect(properties[field].description, field).toBeString();
    }
    expect(properties.phase.description).toContain("queued");
    const content = operation("/api/v1/promptruns/{id}", "get").responses["200"]?.content?.[
      "application/json"
    ] as {
      examples: Record<string, { value: unknown }>;
    };
    const example = content.examples.completedJson?.value as typeof completedJsonRunExample;
    expect(example.outputJson).toEqual(JSON.parse(example.output ?? ""));
    const validator = createComponentValidator(document);
    expect(validator.validate("PromptRun", example)).toEqual([]);
    expect(validator.validate("PromptRun", { ...example, phase: "waiting" }).join()).toContain("/phase");
    expect(validator.validate("PromptRun", { ...example, memory: { messages: -1, dropped: 0 } })).not.toEqual(
      [],
    );

    const completed = json.components.schemas.RunCompletedEvent.properties;
    for (const field of ["outputJson", "finishReason", "memory"])
      expect(completed[field].description, field).toBeString();
    // Optional on the event: servers before structured output do not send them.
    expect(json.components.schemas.RunCompletedEvent.required).not.toContain("outputJson");
    const { runId, output, tokenUsage, cost, finishedAt } = { ...example, runId: example.id };
    const event = {
      runId,
      output,
      tokenUsage,
      cost,
      finishedAt,
      outputJson: example.outputJson,
      finishReason: "stop",
      memory: example.memory,
    };
    expect(validator.validate("RunCompletedEvent", event)).toEqual([]);
  });

  test("the prompt file and prompt version schemas show output, memory and providerOptions", () => {
    const validator = createComponentValidator(document);
    for (const name of ["PromptFile", "PromptVersion"]) {
      const properties = json.components.schemas[name].properties;
      for (const field of ["output", "memory", "providerOptions"])
        expect(properties[field], `${name}.${field}`).toBeDefined();
      expect(JSON.stringify(properties.output)).toContain("json_schema");
    }
    expect(json.components.schemas.PromptVersion.required).toEqual(
      expect.arrayContaining(["output", "memory", "providerOptions"]),
    );
    const file = {
      slug: "extract-contact",
      model: "dev:echo",
      params: { reasoning: { effort: "low" } },
      inputs: { text: { type: "string" }, photo: { type: "image", optional: true } },
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "{{text}}" },
            { type: "image", image: "{{photo}}" },
          ],
        },
      ],
      output: { format: "json_schema", strict: true, schema: { type: "object" } },
      memory: { maxMessages: 20 },
      providerOptions: { openai: { promptCacheKey: "contacts" } },
    };
    expect(validator.validate("PromptFile", file)).toEqual([]);
    expect(validator.validate("PromptFile", { ...file, output: { format: "yaml" } })).not.toEqual([]);
    const version = {
      ...file,
      id: "0196f3c1-1f0e-7a3b-8b7c-1234567890ad",
      version: 1,
      description: null,
      tags: [],
      createdAt: "2026-01-01T00:00:00.000Z",
      contentHash: "0".repeat(64),
      tools: [],
      toolChoice: null,
      maxSteps: null,
      toolTimeoutSeconds: null,
      retrieval: null,
    };
    expect(validator.validate("PromptVersion", version)).toEqual([]);
    expect(
      validator.validate("PromptVersion", { ...version, output: null, memory: null, providerOptions: null }),
    ).toEqual([]);
  });

  test("tools: the operation, the paused run's fields and example, the prompt's tool fields", () => {
    const submit = operation("/api/v1/promptruns/{id}/tool-outputs", "post") as Operation & {
      requestBody: { content: Record<string, { schema: { $ref: string } }> };
      parameters: Array<{ name: string; in: string }>;
    };
    expect(submit.requestBody.content["application/json"]?.schema.$ref).toBe(
      "#/components/schemas/SubmitToolOutputsRequest",
    );
    expect(submit.responses["202"]?.content?.["application/json"]?.schema?.$ref).toBe(
      "#/components/schemas/CreatePromptRunResponse",
    );
    expect(submit.parameters.map((parameter) => [parameter.name, parameter.in])).toEqual([
      ["id", "path"],
      ["Idempotency-Key", "header"],
    ]);
    const schemas = json.components.schemas;
    for (const field of ["requiredAction", "steps"]) {
      expect(schemas.PromptRun.required).toContain(field);
      expect(schemas.PromptRun.properties[field].description, field).toBeString();
    }
    expect(schemas.PromptRun.properties.phase.description).toContain("requires_action");
    for (const name of ["RunStep", "ToolCall", "ToolResult", "RequiredAction", "RenderedTool"])
      expect(schemas[name], name).toBeDefined();

    const validator = createComponentValidator(document);
    const content = operation("/api/v1/promptruns/{id}", "get").responses["200"]?.content?.[
      "application/json"
    ] as { examples: Record<string, { value: unknown }> };
    const paused = content.examples.requiresAction?.value as typeof requiresActionRunExample;
    expect(paused).toMatchObject({ status: "pending", phase: "requires_action" });
    expect(validator.validate("PromptRun", paused)).toEqual([]);
    expect(validator.validate("PromptRun", { ...paused, requiredAction: { type: "other" } })).not.toEqual([]);
    expect(
      validator.validate("RunRequiresActionEvent", {
        runId: paused.id,
        requiredAction: paused.requiredAction,
      }),
    ).toEqual([]);
    expect(
      validator.validate("SubmitToolOutputsRequest", {
        toolOutputs: [{ toolCallId: "call_7Qe2", output: { a: 1 } }],
      }),
    ).toEqual([]);
    expect(validator.validate("SubmitToolOutputsRequest", { toolOutputs: [] })).not.toEqual([]);

    for (const name of ["PromptFile", "PromptVersion"]) {
      const properties = schemas[name].properties;
      for (const field of ["tools", "toolChoice", "maxSteps", "toolTimeoutSeconds"])
        expect(properties[field]?.description, `${name}.${field}`).toBeString();
    }
    expect(schemas.PromptVersion.required).toEqual(
      expect.arrayContaining(["tools", "toolChoice", "maxSteps", "toolTimeoutSeconds"]),
    );
    const tools = [
      { type: "function", name: "lookup_order", parameters: { type: "object" } },
      {
        type: "http",
        name: "get_weather",
        parameters: { type: "object" },
        request: { method: "GET", url: "https://api.example.com/weather?city={{args.city}}" },
      },
      { type: "mcp", server: { url: "https://mcp.example.com/mcp" }, allowedTools: ["search_docs"] },
    ];
    const file = { slug: "agent", model: "dev:echo", messages: [{ role: "user", content: "hi" }] };
    expect(
      validator.validate("PromptFile", { ...file, tools, toolChoice: { name: "lookup_order" } }),
    ).toEqual([]);
    expect(validator.validate("PromptFile", { ...file, tools: [{ type: "shell", name: "x" }] })).not.toEqual(
      [],
    );
    expect(validator.validate("PromptFile", { ...file, maxSteps: 33 })).not.toEqual([]);
  });

  test("workflows: files, versions and runs are components; the run example validates; events are documented", () => {
    const validator = createComponentValidator(document);
    const schemas = json.components.schemas;
    for (const name of [
      "WorkflowFile",
      "WorkflowVersion",
      "WorkflowSummary",
      "WorkflowPushResult",
      "SetWorkflowTagRequest",
      "CreateWorkflowRunRequest",
      "WorkflowRun",
      "WorkflowRunStep",
      "WorkflowRunPage",
      "WorkflowStartedEvent",
      "WorkflowStepEvent",
      "WorkflowCompletedEvent",
      "WorkflowFailedEvent",
    ])
      expect(schemas[name], name).toBeDefined();
    const getRun = operation("/api/v1/workflowruns/{id}", "get").responses["200"]?.content?.[
      "application/json"
    ] as { schema: { $ref: string }; examples: Record<string, { value: unknown }> };
    expect(getRun.schema.$ref).toBe("#/components/schemas/WorkflowRun");
    expect(validator.validate("WorkflowRun", getRun.examples.completed?.value)).toEqual([]);
    // Open to new fields, closed on its enums.
    expect(validator.validate("WorkflowRun", { ...completedWorkflowRunExample, later: 1 })).toEqual([]);
    expect(
      validator.validate("WorkflowRun", { ...completedWorkflowRunExample, status: "running" }),
    ).not.toEqual([]);
    const badStep = { ...completedWorkflowRunExample.steps[0], status: "waiting" };
    expect(
      validator.validate("WorkflowRun", { ...completedWorkflowRunExample, steps: [badStep] }),
    ).not.toEqual([]);
    // The create body is create-run's without a channel, closed.
    expect(validator.validate("CreateWorkflowRunRequest", { inputs: { ticket: "x" } })).toEqual([]);
    expect(validator.validate("CreateWorkflowRunRequest", { inputs: {}, channel: "x" })).not.toEqual([]);
    const file = {
      slug: "triage",
      inputs: { ticket: { type: "string" } },
      steps: [
        { id: "classify", prompt: "classify@production", inputs: { text: "{{inputs.ticket}}" } },
        { id: "docs", retrieve: { knowledgeBase: "help", query: "{{inputs.ticket}}", topK: 5 } },
        { id: "answer", prompt: "answer", when: "steps.classify.outputJson.category != 'spam'" },
      ],
      output: "{{steps.answer.output}}",
    };
    expect(validator.validate("WorkflowFile", file)).toEqual([]);
    expect(validator.validate("WorkflowFile", { ...file, steps: [] })).not.toEqual([]);
    expect(validator.validate("WorkflowFile", { ...file, extra: 1 })).not.toEqual([]);
    expect(
      validator.validate("WorkflowCompletedEvent", {
        workflowRunId: completedWorkflowRunExample.id,
        output: completedWorkflowRunExample.output,
        outputJson: null,
        tokenUsage: completedWorkflowRunExample.tokenUsage,
        cost: completedWorkflowRunExample.cost,
        finishedAt: completedWorkflowRunExample.finishedAt,
      }),
    ).toEqual([]);
    const createRun = operation("/api/v1/workflows/{slug}/{version}/runs", "post") as Operation & {
      parameters: Array<{ name: string; in: string }>;
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(createRun.parameters.map((parameter) => [parameter.name, parameter.in])).toEqual([
      ["slug", "path"],
      ["version", "path"],
      ["Idempotency-Key", "header"],
    ]);
    expect(Object.keys(createRun.responses["202"]?.headers ?? {})).toEqual([
      "Location",
      "Idempotent-Replayed",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    ]);
  });
});
