import { afterAll, expect, test } from "bun:test";
import { startPortkeyGateway } from "./portkey-gateway.ts";
import { stampOf } from "./stamped-tokens.ts";
import { startStampedUpstream } from "./stamped-upstream.ts";

const upstream = startStampedUpstream();
afterAll(() => upstream.stop());

test("the Portkey gateway runs under Bun and relays a stamped stream from the local upstream", async () => {
  const gateway = await startPortkeyGateway();
  try {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...gateway.headersFor(`${upstream.url}/v1`) },
      body: JSON.stringify({ model: "stamp-5-1", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const deltas = [...text.matchAll(/"content":"(@[\d.]+ )"/g)].map((match) => match[1]!);
    expect(deltas).toHaveLength(5);
    expect(deltas.every((delta) => stampOf(delta) !== null)).toBe(true);
    expect(text).toContain("[DONE]");
  } finally {
    await gateway.stop();
  }
}, 60_000);
