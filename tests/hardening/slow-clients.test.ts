/**
 * Slowloris-style clients over raw sockets: many connections that never finish their headers,
 * trickle them byte by byte, or trickle a body, while normal clients keep creating and reading
 * runs. The server answers the normal clients throughout and sheds the slow sockets on its own:
 * unfinished headers within ~12 s (Bun's own header deadline, whatever PROMPTRUN_HTTP_IDLE_TIMEOUT
 * says), a trickled body once PROMPTRUN_HTTP_IDLE_TIMEOUT has passed since the request began.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { type RawSocket, rawConnect, waitUntil } from "./support.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_HTTP_IDLE_TIMEOUT: "2" } });
});
afterAll(async () => {
  await server?.dispose();
});

const openDescriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

test("slow and silent sockets neither starve normal clients nor stay open", async () => {
  const pid = server.process.pid;
  const descriptorsBefore = openDescriptors(pid);
  const startedAt = Date.now();

  const silent: RawSocket[] = [];
  const partialHeaders: RawSocket[] = [];
  const trickledHeaders: RawSocket[] = [];
  const trickledBodies: RawSocket[] = [];
  for (let index = 0; index < 100; index++) silent.push(await rawConnect(server));
  for (let index = 0; index < 100; index++) {
    const socket = await rawConnect(server);
    socket.write(`POST /api/v1/prompts/greet/latest/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Part: `);
    partialHeaders.push(socket);
  }
  for (let index = 0; index < 50; index++) trickledHeaders.push(await rawConnect(server));
  for (let index = 0; index < 30; index++) {
    const socket = await rawConnect(server);
    socket.write(
      `POST /api/v1/prompts/greet/latest/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
    );
    trickledBodies.push(socket);
  }
  const headerText = `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${"a".repeat(10_000)}`;
  let position = 0;
  const trickle = setInterval(() => {
    const character = headerText[position++ % headerText.length]!;
    for (const socket of trickledHeaders) socket.write(character);
    for (const socket of trickledBodies) socket.write(" ");
  }, 250);

  try {
    // The server has accepted them all (one descriptor each).
    await waitUntil(() => openDescriptors(pid) >= descriptorsBefore + 250, "sockets accepted", 10_000);

    // Normal clients meanwhile: every request answered, promptly.
    let slowest = 0;
    for (let index = 0; index < 20; index++) {
      const began = performance.now();
      const response = await api(server, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: `Normal ${index}` } },
      });
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      const run = await waitForRun(server, id, 10_000);
      expect(run.status).toBe("completed");
      slowest = Math.max(slowest, performance.now() - began);
    }
    // Generous: each cycle streams five words at 20 ms; seconds would mean starvation.
    expect(slowest).toBeLessThan(5_000);

    // A trickled body is cut once the idle timeout (2 s, ticks of 4 s) has passed.
    await waitUntil(
      () => trickledBodies.every((socket) => socket.isClosed()),
      "trickled bodies closed",
      15_000,
    );
    // Unfinished headers, trickled or not, are dropped by Bun's header deadline (~10 s).
    await waitUntil(
      () => [...silent, ...partialHeaders, ...trickledHeaders].every((socket) => socket.isClosed()),
      "header-less sockets closed",
      25_000,
    );
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    // None of them got an answer that a handler produced (no request was ever completed).
    for (const socket of [...silent, ...partialHeaders])
      expect(socket.received()).not.toContain("HTTP/1.1 2");
    // The descriptors went back: nothing leaked per slow client.
    await waitUntil(() => openDescriptors(pid) <= descriptorsBefore + 10, "descriptors released", 10_000);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  } finally {
    clearInterval(trickle);
    for (const socket of [...silent, ...partialHeaders, ...trickledHeaders, ...trickledBodies]) socket.end();
  }
}, 60_000);
