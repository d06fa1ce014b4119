/**
 * A fake OpenAI-compatible embeddings endpoint on 127.0.0.1 (POST /v1/embeddings), at the wire
 * level: deterministic vectors from each input's words, usage counted in words, and an adjustable
 * delay per request, so a test can hold ingestion mid-way (e.g. to kill the server then).
 * The server reaches it through PROMPTRUN_PROVIDERS=<name>=<baseUrl>.
 */
const DIMENSIONS = 16;

function vectorOf(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let hash = 0x811c9dc5;
    for (let index = 0; index < word.length; index++)
      hash = Math.imul(hash ^ word.charCodeAt(index), 0x01000193);
    vector[(hash >>> 0) % DIMENSIONS]! += 1;
  }
  vector[0]! += 0.001; // never the zero vector
  return vector;
}

export interface FakeEmbeddings {
  /** `name=baseUrl` for PROMPTRUN_PROVIDERS. */
  provider(name: string): string;
  /** Milliseconds each request waits before it is answered (change it at any time). */
  delayMs: number;
  /** Requests received (answered or not). */
  requests(): number;
  stop(): void;
}

export function startFakeEmbeddings(delayMs = 0): FakeEmbeddings {
  let requests = 0;
  const fake: FakeEmbeddings = {
    delayMs,
    provider: (name) => `${name}=http://127.0.0.1:${server.port}/v1`,
    requests: () => requests,
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (request.method !== "POST" || !new URL(request.url).pathname.endsWith("/embeddings"))
        return new Response("not found", { status: 404 });
      requests += 1;
      const body = (await request.json()) as { input: string | string[]; model: string };
      if (fake.delayMs > 0) await Bun.sleep(fake.delayMs);
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      const words = inputs.reduce((sum, text) => sum + (text.match(/\S+/g)?.length ?? 0), 0);
      return Response.json({
        object: "list",
        model: body.model,
        data: inputs.map((text, index) => ({ object: "embedding", index, embedding: vectorOf(text) })),
        usage: { prompt_tokens: words, total_tokens: words },
      });
    },
  });
  return fake;
}
