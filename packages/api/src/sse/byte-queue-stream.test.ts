import { describe, expect, test } from "bun:test";
import { createByteQueueStream } from "./byte-queue-stream.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunk: Uint8Array | undefined) => new TextDecoder().decode(chunk);

describe("createByteQueueStream", () => {
  test("a pull takes everything queued as one chunk and tracks the last tagged one", async () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 100, onCancel() {} });
    const reader = queue.stream.getReader();
    expect(queue.write(bytes("a"), "1")).toBe("written");
    expect(queue.write(bytes("b"))).toBe("written");
    expect(queue.write(bytes("c"), "3")).toBe("written");
    expect(queue.write(bytes("d"))).toBe("written");
    expect(queue.lastTakenEventId).toBeUndefined();
    expect(text((await reader.read()).value)).toBe("abcd");
    expect(queue.lastTakenEventId).toBe("3");
    expect(queue.queuedBytes).toBe(0);
  });

  test("writes to a waiting reader during one turn arrive as one chunk, later ones in the next", async () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 100, onCancel() {} });
    const reader = queue.stream.getReader();
    const first = reader.read();
    queue.write(bytes("x"), "1");
    queue.write(bytes("y"), "2");
    expect(text((await first).value)).toBe("xy");
    expect(queue.lastTakenEventId).toBe("2");
    const second = reader.read();
    await new Promise((resolve) => setImmediate(resolve));
    queue.write(bytes("z"), "3");
    expect(text((await second).value)).toBe("z");
    expect(queue.lastTakenEventId).toBe("3");
  });

  test("subscribers holding the same events in one turn get the very same bytes", async () => {
    const events = [bytes("e1;"), bytes("e2;"), bytes("e3;")];
    const queues = [0, 1, 2].map(() => createByteQueueStream({ maxQueuedBytes: 100, onCancel() {} }));
    const reads = queues.map((queue) => queue.stream.getReader().read());
    for (const event of events) for (const queue of queues) queue.write(event);
    const chunks = await Promise.all(reads);
    expect(text(chunks[0]!.value)).toBe("e1;e2;e3;");
    expect(chunks[1]!.value).toBe(chunks[0]!.value!);
    expect(chunks[2]!.value).toBe(chunks[0]!.value!);
  });

  test("refuses a chunk that would take the backlog past the limit, without queueing it", () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 10, onCancel() {} });
    expect(queue.write(bytes("12345"))).toBe("written");
    expect(queue.write(bytes("67890"))).toBe("written");
    expect(queue.write(bytes("x"))).toBe("overflow");
    expect(queue.queuedBytes).toBe(10);
    expect(queue.peakQueuedBytes).toBe(10);
  });

  test("finish with discardBacklog drops the queue and ends after the last chunk", async () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 1000, onCancel() {} });
    for (let index = 0; index < 5; index++) queue.write(bytes(`event ${index};`));
    queue.finish(bytes("end"), { discardBacklog: true });
    expect(queue.queuedBytes).toBe(3);
    expect(queue.write(bytes("late"))).toBe("closed");
    expect(await new Response(queue.stream).text()).toBe("end");
  });

  test("finish without discarding delivers the backlog first", async () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 1000, onCancel() {} });
    queue.write(bytes("a;"));
    queue.write(bytes("b;"));
    queue.finish(bytes("end"), { discardBacklog: false });
    expect(await new Response(queue.stream).text()).toBe("a;b;end");
  });

  test("finish while the reader waits closes at once", async () => {
    const queue = createByteQueueStream({ maxQueuedBytes: 1000, onCancel() {} });
    const reader = queue.stream.getReader();
    const pending = reader.read();
    queue.finish(bytes("end"), { discardBacklog: false });
    expect(text((await pending).value)).toBe("end");
    expect((await reader.read()).done).toBe(true);
  });

  test("cancel by the reader frees the queue and reports it", async () => {
    let cancelled = 0;
    const queue = createByteQueueStream({
      maxQueuedBytes: 1000,
      onCancel: () => {
        cancelled++;
      },
    });
    queue.write(bytes("abc"));
    await queue.stream.cancel();
    expect(cancelled).toBe(1);
    expect(queue.queuedBytes).toBe(0);
    expect(queue.write(bytes("x"))).toBe("closed");
  });
});
