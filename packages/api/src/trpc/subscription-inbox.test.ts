import { expect, test } from "bun:test";
import { createSubscriptionInbox } from "./subscription-inbox.ts";

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

test("values queued before and during draining come out in order, then the end reason", async () => {
  const inbox = createSubscriptionInbox<string>(1000);
  inbox.push({ value: "a", bytes: 1 });
  const drained = collect(inbox.drain(undefined));
  await Bun.sleep(0);
  inbox.push({ value: "b", bytes: 1 });
  inbox.end("shutdown", { discardBacklog: false });
  inbox.push({ value: "after end", bytes: 1 });
  expect(await drained).toEqual([{ value: "a" }, { value: "b" }, { end: "shutdown" }]);
});

test("a push past the byte limit ends the subscriber as a slow consumer and drops its backlog", async () => {
  const inbox = createSubscriptionInbox<string>(10);
  inbox.push({ value: "a", bytes: 6 });
  inbox.push({ value: "b", bytes: 4 });
  inbox.push({ value: "c", bytes: 1 });
  expect(await collect(inbox.drain(undefined))).toEqual([{ end: "slow_consumer" }]);
});

test("an abort stops a waiting drain without an end event", async () => {
  const inbox = createSubscriptionInbox<string>(10);
  const controller = new AbortController();
  const drained = collect(inbox.drain(controller.signal));
  await Bun.sleep(0);
  controller.abort();
  expect(await drained).toEqual([]);
});
