/** The paths section 2 reads the stamped upstream through, and the stream-client command for each. */
import type { BenchPrompt } from "../bench-prompts.ts";
import type { StreamClientCommand } from "../processes/stream-client.ts";
import { parseUpstreamModel } from "../stamped-tokens.ts";

export type StreamPath =
  | "upstream directly"
  | "AI SDK streamText (no server)"
  | "bare Bun relay (floor)"
  | "Portkey gateway"
  | "Promptrun (SSE)";

/** One kind of stream: the upstream model (read directly or by a gateway) and the prompt Promptrun runs. */
export interface StreamShape {
  slug: string;
  model: string;
  tokens: number;
}

/** A bench prompt's stream: `bench:stamp-200-5` → model `stamp-200-5`, 200 tokens. */
export function shapeOf(prompt: BenchPrompt): StreamShape {
  const model = prompt.model.slice(prompt.model.indexOf(":") + 1);
  const behaviour = parseUpstreamModel(model);
  if (behaviour?.kind !== "stamp") throw new Error(`${prompt.slug} is not a stamped stream`);
  return { slug: prompt.slug, model, tokens: behaviour.tokens };
}

export interface PathEndpoints {
  /** The upstream's OpenAI base URL (…/v1). */
  upstreamBase: string;
  relayUrl: string;
  portkey: { url: string; headersFor(upstreamBaseUrl: string): Record<string, string> } | null;
  promptrun: { url: string; apiKey: string };
}

export interface BatchShape {
  shape: StreamShape;
  concurrency: number;
  total: number;
  /** Streams start at random moments within this many ms (0: all at once). */
  startSpreadMs?: number;
}

/** The client command that reads `batch` through `path`. */
export function streamCommand(
  endpoints: PathEndpoints,
  path: StreamPath,
  batch: BatchShape,
): StreamClientCommand {
  const { shape } = batch;
  const common = {
    type: "run" as const,
    concurrency: batch.concurrency,
    total: batch.total,
    expectedTokens: shape.tokens,
    timeoutMs: 60_000,
    ...(batch.startSpreadMs ? { startSpreadMs: batch.startSpreadMs } : {}),
  };
  const openAI = (url: string, headers: Record<string, string> = {}) => ({
    ...common,
    mode: "openai" as const,
    url: `${url}/chat/completions`,
    headers,
    model: shape.model,
  });
  switch (path) {
    case "upstream directly":
      return openAI(endpoints.upstreamBase);
    case "AI SDK streamText (no server)":
      return { ...common, mode: "ai-sdk", baseUrl: endpoints.upstreamBase, model: shape.model };
    case "bare Bun relay (floor)":
      return openAI(`${endpoints.relayUrl}/v1`);
    case "Portkey gateway":
      if (!endpoints.portkey) throw new Error("Portkey is not running");
      return openAI(`${endpoints.portkey.url}/v1`, endpoints.portkey.headersFor(endpoints.upstreamBase));
    case "Promptrun (SSE)":
      return {
        ...common,
        mode: "promptrun",
        baseUrl: endpoints.promptrun.url,
        apiKey: endpoints.promptrun.apiKey,
        slug: shape.slug,
      };
  }
}
