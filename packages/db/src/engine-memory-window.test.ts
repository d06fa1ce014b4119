/**
 * A 300-turn thread through the real engine on each real store: with `memory: {maxMessages: 20}`
 * every turn completes and reports exactly the window it carried (docs/PRODUCT-RULES.md
 * "Thread memory"). The engine's other memory-window cases: core/src/engine/engine-memory-window.test.ts.
 */
import { expect } from "bun:test";
import type { Store } from "@promptrun/core";
import { createEngineFixture } from "@promptrun/core/testing";
import { testOnEachStore } from "./test-each-store.ts";

const TURNS = 300;

/** Turn `turn` (1-based) of a thread whose exchanges are 2 messages, under maxMessages 20. */
const expectedWindow = (turn: number) => {
  const history = 2 * (turn - 1);
  const messages = Math.min(history, 20);
  return { messages, dropped: history - messages };
};

const threeHundredTurns = async (store: Store) => {
  const fixture = await createEngineFixture({
    store,
    prompt: { model: "dev:echo", memory: { maxMessages: 20 } },
  });
  await fixture.engine.start();
  try {
    const thread = Bun.randomUUIDv7();
    const windows = [];
    for (let turn = 1; turn <= TURNS; turn++) {
      const run = await fixture.createRun({ thread, inputs: { message: `turn ${turn}` } });
      const ended = await fixture.waitForEnd(run.id);
      expect(ended).toMatchObject({ status: "completed", output: `turn ${turn}` });
      windows.push(ended.memoryWindow);
    }
    expect(windows).toEqual(Array.from({ length: TURNS }, (_, index) => expectedWindow(index + 1)));
    // The whole thread is kept: the window bounds what a run carries, not what is stored.
    const stored = await store.runs.getThread(fixture.tenantId, thread);
    expect(stored?.messages).toHaveLength(2 * TURNS);
    const last = await store.runs.memory(fixture.tenantId, thread, "default", {
      maxMessages: 20,
      maxBytes: 1_000_000,
    });
    expect(last.dropped).toBe(2 * TURNS - 20);
    expect(last.messages.at(-1)).toEqual({ role: "assistant", content: `turn ${TURNS}` });
  } finally {
    await fixture.close();
  }
};

await testOnEachStore(
  `${TURNS} turns with memory.maxMessages 20 each report their window`,
  threeHundredTurns,
  60_000,
);
