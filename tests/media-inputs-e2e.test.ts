/**
 * Image and file inputs end to end through the real server (SQLite, or Postgres + Redis with
 * PROMPTRUN_E2E_DATABASE=postgres), docs/providers.md "Files and images" and
 * docs/PRODUCT-RULES.md "Thread memory": a run with a PNG and a PDF as data: URLs reaches the
 * wire-level fake of OpenAI's chat completions as an `image_url` part and a `file` part; the next
 * run on the same (thread, channel) sends them again from memory; and on the keyless development
 * model a run with parts completes promptly and its exchange is in the thread.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeRequest, startFakeOpenAI } from "@promptrun/core/testing";
import { pushPrompts } from "./hardening/support.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

/** A real 1×1 PNG. */
const PNG_DATA_URL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** A real one-page PDF ("Hello PDF"), with a correct cross-reference table. */
function onePagePdf(): string {
  const stream = "BT /F1 24 Tf 72 720 Td (Hello PDF) Tj ET";
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, "0")} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return `data:application/pdf;base64,${Buffer.from(body, "latin1").toString("base64")}`;
}
const PDF_DATA_URL = onePagePdf();

const mediaInputs = {
  question: { type: "string" },
  photo: { type: "image", optional: true },
  contract: { type: "file", optional: true },
};
const mediaMessages = [
  { role: "system", content: "You read photos and contracts." },
  {
    role: "user",
    content: [
      { type: "text", text: "{{question}}" },
      { type: "image", image: "{{photo}}" },
      { type: "file", file: "{{contract}}", filename: "contract.pdf" },
    ],
  },
];

type ChatMessage = { role: string; content: unknown };
type ChatBody = { messages: ChatMessage[] };

const openai = startFakeOpenAI((request: FakeRequest) => ({
  type: "stream",
  tokens: [`seen ${(request.body as ChatBody).messages.length} messages`],
}));
let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    env: { OPENAI_API_KEY: "sk-test-openai", OPENAI_BASE_URL: openai.baseUrl },
  });
  await pushPrompts(server, server.tenantId, [
    { slug: "see-openai", model: "openai:gpt-test", inputs: mediaInputs, messages: mediaMessages },
    { slug: "see-echo", model: "dev:echo", inputs: mediaInputs, messages: mediaMessages },
  ]);
});
afterAll(async () => {
  await server?.dispose();
  await openai.close();
});

async function createRun(slug: string, body: Record<string, unknown>): Promise<string> {
  const response = await api(server, `/api/v1/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  expect(response.status, await response.clone().text()).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

/** The user message the first run sent, as OpenAI's chat completions format spells it. */
const expectedUserParts = [
  { type: "text", text: "What does the contract say?" },
  { type: "image_url", image_url: { url: PNG_DATA_URL } },
  { type: "file", file: { filename: "contract.pdf", file_data: PDF_DATA_URL } },
];

describe("image and file parts on an OpenAI model (wire-level fake)", () => {
  test("the PNG goes as image_url and the PDF as a file part; the next run sends both again from memory", async () => {
    const thread = crypto.randomUUID();
    const first = openai.requests.length;
    const firstId = await createRun("see-openai", {
      thread,
      channel: "review",
      inputs: { question: "What does the contract say?", photo: PNG_DATA_URL, contract: PDF_DATA_URL },
    });
    const firstRun = await waitForRun(server, firstId);
    expect(firstRun).toMatchObject({ status: "completed", output: "seen 2 messages", error: null });
    expect(openai.requests.length).toBe(first + 1);
    const firstBody = openai.requests[first]!.body as ChatBody;
    expect(firstBody.messages).toEqual([
      { role: "system", content: "You read photos and contracts." },
      { role: "user", content: expectedUserParts },
    ]);

    // Same thread and channel, no image this time: memory carries the first exchange's parts.
    const secondId = await createRun("see-openai", {
      thread,
      channel: "review",
      inputs: { question: "And the signature?" },
    });
    const secondRun = await waitForRun(server, secondId);
    expect(secondRun).toMatchObject({
      status: "completed",
      output: "seen 4 messages",
      memory: { messages: 2, dropped: 0 },
    });
    expect(openai.requests.length).toBe(first + 2);
    const secondBody = openai.requests[first + 1]!.body as ChatBody;
    expect(secondBody.messages).toEqual([
      { role: "system", content: "You read photos and contracts." },
      { role: "user", content: expectedUserParts },
      { role: "assistant", content: "seen 2 messages" },
      // A message of one text part: the provider library sends it as a plain string.
      { role: "user", content: "And the signature?" },
    ]);
  });
});

async function threadMessages(thread: string): Promise<Record<string, unknown[]>> {
  const input = encodeURIComponent(JSON.stringify({ id: thread }));
  const response = await fetch(`${server.url}/trpc/thread.get?input=${input}`, {
    headers: { authorization: `Bearer ${server.apiKey}` },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result: { data: { channels: Record<string, unknown[]> } } };
  return body.result.data.channels;
}

describe(`image parts on dev:echo (${process.env.PROMPTRUN_E2E_DATABASE ?? "sqlite"})`, () => {
  test("the run completes within seconds, its exchange is in the thread and the next run carries it", async () => {
    const thread = crypto.randomUUID();
    const startedAt = Date.now();
    const firstId = await createRun("see-echo", {
      thread,
      inputs: { question: "describe the photo", photo: PNG_DATA_URL, contract: PDF_DATA_URL },
    });
    const first = await waitForRun(server, firstId, 5_000);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(first).toMatchObject({ status: "completed", output: "describe the photo", error: null });

    const channels = await threadMessages(thread);
    expect(channels.default).toMatchObject([
      { role: "user", content: "describe the photo", runId: firstId },
      { role: "assistant", content: "describe the photo", runId: firstId },
    ]);
    // The stored user message keeps its parts (what the next run sends again).
    const [stored] = await server.sql<{ parts: unknown }>(
      "select parts from messages where run_id = ? and role = 'user'",
      [firstId],
    );
    const parts = typeof stored?.parts === "string" ? JSON.parse(stored.parts) : stored?.parts;
    expect(parts).toEqual([
      { type: "text", text: "describe the photo" },
      { type: "image", image: PNG_DATA_URL },
      { type: "file", file: PDF_DATA_URL, filename: "contract.pdf" },
    ]);

    const secondId = await createRun("see-echo", { thread, inputs: { question: "and now?" } });
    const second = await waitForRun(server, secondId, 5_000);
    expect(second).toMatchObject({
      status: "completed",
      output: "and now?",
      memory: { messages: 2, dropped: 0 },
    });
    expect((await threadMessages(thread)).default).toHaveLength(4);
  });
});
