import { afterAll, expect, test } from "bun:test";
import { openSseSocket } from "./sse-socket-client.ts";

const encoder = new TextEncoder();
let closedByClient = 0;

// A real Bun.serve SSE endpoint: Bun sends it chunked, one chunk per enqueue.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const url = new URL(request.url);
    if (request.headers.get("authorization") !== "Bearer good")
      return Response.json({ error: "no" }, { status: 401 });
    const count = Number(url.searchParams.get("count") ?? "3");
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(`event: ready\ndata: {"thread":"t"}\n\n`));
        let sent = 0;
        timer = setInterval(() => {
          // Split one event over two enqueues to exercise reassembly.
          controller.enqueue(encoder.encode(`id: ${sent}\nevent: run.token\nda`));
          controller.enqueue(encoder.encode(`ta: {"index":${sent}}\n\n: ping\n\n`));
          if (++sent === count) {
            clearInterval(timer);
            if (url.searchParams.has("end")) controller.close();
          }
        }, 2);
      },
      cancel() {
        clearInterval(timer);
        closedByClient++;
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  },
});
afterAll(() => server.stop(true));

const subscribe = (path: string, authorization: string) => {
  const events: Array<{ event: string; data: string }> = [];
  const closes: string[] = [];
  const opened = openSseSocket({
    host: "127.0.0.1",
    port: server.port!,
    path,
    headers: { authorization },
    onEvent: (event, data) => events.push({ event, data }),
    onClose: (reason) => closes.push(reason),
  });
  return { opened, events, closes };
};

const until = async (condition: () => boolean) => {
  for (let polls = 0; !condition() && polls < 1000; polls++) await Bun.sleep(5);
  expect(condition()).toBe(true);
};

test("receives every event of a chunked SSE response in order, then the server's end", async () => {
  const { opened, events, closes } = subscribe("/stream?count=50&end=1", "Bearer good");
  const socket = await opened;
  expect(await socket.status).toBe(200);
  await until(() => closes.length > 0);
  expect(closes).toEqual(["response ended"]);
  expect(events[0]).toEqual({ event: "ready", data: '{"thread":"t"}' });
  expect(events.slice(1).map((event) => JSON.parse(event.data).index)).toEqual([...Array(50).keys()]);
  expect(events.slice(1).every((event) => event.event === "run.token")).toBe(true);
});

test("reports the status of a refused request", async () => {
  const { opened } = subscribe("/stream", "Bearer bad");
  expect(await (await opened).status).toBe(401);
});

test("close() ends the connection and the server sees the subscriber leave", async () => {
  const before = closedByClient;
  const { opened, events, closes } = subscribe("/stream?count=100000", "Bearer good");
  const socket = await opened;
  await until(() => events.length > 3);
  socket.close();
  expect(closes).toEqual(["closed by client"]);
  await until(() => closedByClient === before + 1);
});
