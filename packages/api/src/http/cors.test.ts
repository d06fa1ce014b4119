import { describe, expect, test } from "bun:test";
import { createTestApp } from "./test-app.ts";

describe("CORS", () => {
  test("stream and tRPC answer preflights and carry allow-origin; REST does not", async () => {
    const testApp = await createTestApp();
    const { app } = testApp;
    const preflight = await app.fetch(
      new Request(`http://test/stream/${crypto.randomUUID()}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example",
          "access-control-request-headers": "authorization, last-event-id",
        },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("last-event-id");
    const stream = await app.fetch(
      new Request(`http://test/stream/${crypto.randomUUID()}`, {
        headers: { origin: "https://app.example" },
      }),
    );
    expect(stream.status).toBe(401);
    expect(stream.headers.get("access-control-allow-origin")).toBe("*");
    const trpcPreflight = await app.fetch(new Request("http://test/trpc/run.get", { method: "OPTIONS" }));
    expect(trpcPreflight.status).toBe(204);
    const rest = await app.fetch(
      new Request(`http://test/api/v1/promptruns/${crypto.randomUUID()}`, {
        headers: { origin: "https://app.example" },
      }),
    );
    expect(rest.headers.get("access-control-allow-origin")).toBeNull();
    const restPreflight = await app.fetch(
      new Request("http://test/api/v1/promptruns/x", { method: "OPTIONS" }),
    );
    expect(restPreflight.status).toBe(405);
    await testApp.dispose();
  });
});
