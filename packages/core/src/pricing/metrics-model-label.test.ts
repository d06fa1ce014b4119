import { expect, test } from "bun:test";
import { MAX_MODEL_LABEL_LENGTH, metricsModelLabel, OTHER_MODEL_LABEL } from "./metrics-model-label.ts";

test("known models keep provider:model: dev:echo, price overrides, the price data set", () => {
  expect(metricsModelLabel("dev:echo", {})).toBe("dev:echo");
  expect(metricsModelLabel("openai:gpt-4o-mini", {})).toBe("openai:gpt-4o-mini");
  expect(metricsModelLabel("anthropic:claude-3-5-haiku-latest", {})).toBe(
    "anthropic:claude-3-5-haiku-latest",
  );
  expect(metricsModelLabel("local:llama3.2:1b", { "local:llama3.2:1b": {} })).toBe("local:llama3.2:1b");
});

test("anything else collapses to one value, however long or varied", () => {
  const labels = new Set<string>();
  for (let index = 0; index < 50; index++) {
    labels.add(metricsModelLabel(`fake:model-${index}-${"x".repeat(index * 100)}`, {}));
    labels.add(metricsModelLabel(`openai:not-a-real-model-${index}`, {}));
    labels.add(metricsModelLabel(`nonsense-${index}`, {}));
  }
  expect([...labels]).toEqual([OTHER_MODEL_LABEL]);
  expect(
    metricsModelLabel(`ops:${"m".repeat(MAX_MODEL_LABEL_LENGTH)}`, { [`ops:${"m".repeat(64)}`]: {} }),
  ).toBe(OTHER_MODEL_LABEL);
});
