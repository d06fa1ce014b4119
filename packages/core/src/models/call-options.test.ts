import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { assertModelTakesPromptFields, effortForBudget, promptCallOptions } from "./call-options.ts";
import { assertNoDroppedFields } from "./provider-warnings.ts";

const schema = { type: "object", properties: { a: { type: "string" } } };

describe("promptCallOptions", () => {
  test("a plain text prompt adds nothing to the call (it stays on the lean path)", () => {
    expect(promptCallOptions({ modelRef: "openai:gpt-4o-mini", params: { temperature: 1 } })).toEqual({});
    expect(
      promptCallOptions({ modelRef: "openai:gpt-4o-mini", params: {}, output: { format: "text" } }),
    ).toEqual({});
  });

  test("OpenAI: responseFormat with name and description, strict from output.strict, reasoning", () => {
    expect(
      promptCallOptions({
        modelRef: "openai:gpt-5",
        params: { reasoning: { effort: "minimal" } },
        output: { format: "json_schema", name: "answer", description: "d", strict: true, schema },
      }),
    ).toEqual({
      responseFormat: { type: "json", schema, name: "answer", description: "d" },
      reasoning: "minimal",
      providerOptions: { openai: { strictJsonSchema: true } },
    });
  });

  test("the prompt's own provider options win over the derived ones; other providers' pass through", () => {
    expect(
      promptCallOptions({
        modelRef: "local:qwen",
        params: {},
        output: { format: "json_schema", schema },
        providerOptions: { local: { strictJsonSchema: true, num_ctx: 4096 }, other: { x: 1 } },
      }),
    ).toEqual({
      responseFormat: { type: "json", schema },
      providerOptions: { local: { strictJsonSchema: true, num_ctx: 4096 }, other: { x: 1 } },
    });
  });

  test("Anthropic: thinking budget from budgetTokens, else from the effort table", () => {
    const thinking = (reasoning: { effort?: "low" | "high"; budgetTokens?: number }) =>
      promptCallOptions({ modelRef: "anthropic:claude-sonnet-4-5", params: { reasoning } }).providerOptions;
    expect(thinking({ budgetTokens: 3_000 })).toEqual({
      anthropic: { thinking: { type: "enabled", budgetTokens: 3_000 } },
    });
    expect(thinking({ effort: "low" })).toEqual({
      anthropic: { thinking: { type: "enabled", budgetTokens: 2_048 } },
    });
    expect(thinking({ effort: "high" })).toEqual({
      anthropic: { thinking: { type: "enabled", budgetTokens: 24_576 } },
    });
  });

  test("budgetTokens alone → the smallest effort whose budget covers it", () => {
    expect([1, 1_024, 1_025, 2_048, 8_192, 8_193, 100_000].map(effortForBudget)).toEqual([
      "minimal",
      "minimal",
      "low",
      "low",
      "medium",
      "high",
      "high",
    ]);
  });

  test("dev:echo gets the output schema and nothing for reasoning", () => {
    expect(
      promptCallOptions({
        modelRef: "dev:echo",
        params: { reasoning: { effort: "low" } },
        output: { format: "json_schema", schema },
      }),
    ).toEqual({ responseFormat: { type: "json", schema } });
  });
});

describe("what a model cannot take", () => {
  test("reasoning on an OpenAI model its catalog marks as not reasoning", () => {
    const check = (modelRef: string) => () =>
      assertModelTakesPromptFields({ modelRef, params: { reasoning: { effort: "low" } } });
    expect(check("openai:gpt-4o-mini")).toThrow(
      "openai:gpt-4o-mini cannot take params.reasoning: the model does not reason (AI SDK model catalog)",
    );
    expect(check("openai:gpt-5")).not.toThrow();
    expect(check("openai:some-future-model")).not.toThrow();
    expect(check("anthropic:claude-sonnet-4-5")).not.toThrow();
  });

  test("unsupported / other warnings fail; sampling params, compatibility and deprecation do not", () => {
    const call = {
      prompt: [],
      reasoning: "low" as const,
      providerOptions: { openai: { serviceTier: "flex" } },
    };
    const fails = (warning: Parameters<typeof assertNoDroppedFields>[1][number]) => {
      try {
        assertNoDroppedFields("openai:gpt-4o", [warning], call);
        return null;
      } catch (error) {
        expect(PromptrunError.isInstance(error)).toBe(true);
        return (error as Error).message;
      }
    };
    expect(fails({ type: "unsupported", feature: "temperature", details: "dropped" })).toBeNull();
    expect(fails({ type: "compatibility", feature: "reasoning", details: "mapped" })).toBeNull();
    expect(fails({ type: "deprecated", setting: "x", message: "y" })).toBeNull();
    expect(fails({ type: "other", message: "system messages are removed for this model" })).toBeNull();
    expect(fails({ type: "unsupported", feature: "reasoning", details: "no" })).toBe(
      "openai:gpt-4o cannot take params.reasoning: no",
    );
    expect(fails({ type: "unsupported", feature: "serviceTier", details: "flex only for o3" })).toBe(
      "openai:gpt-4o cannot take providerOptions.openai.serviceTier: flex only for o3",
    );
    expect(fails({ type: "unsupported", feature: "responseFormat" })).toBe(
      "openai:gpt-4o cannot take output: responseFormat is not supported",
    );
    expect(fails({ type: "other", message: "logprobs is not supported for reasoning models" })).toBe(
      "openai:gpt-4o cannot take providerOptions: logprobs is not supported for reasoning models",
    );
  });
});
