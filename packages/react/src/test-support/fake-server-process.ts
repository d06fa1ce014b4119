/**
 * Runs the contract fake in its own process: happy-dom replaces `fetch` and `Response` in the
 * test process, where a Bun.serve would break. Prints `{url, apiKey}` as one JSON line.
 * Scripts by the `message` input: `fail:` ends failed, `retry:` restarts after two tokens,
 * `json:<JSON>` answers that JSON as structured output (outputJson, with memory 2 carried and 1
 * dropped); `tool:<name> <JSON args>[ | <name> <JSON args>…]` says "Checking." and pauses for those
 * client tool calls (ids `call_1`, `call_2`, …), then answers `Result: <JSON of the outputs>`;
 * `delayMs` (input) slows the tokens down. A workflow run's `inputs.steps` (strings) are its steps,
 * run in order, each scripted the same way (the fake's default workflow script).
 */
import { startFakePromptrunServer } from "@promptrun/client/testing";

/** Ends the process with a code (named so it reads as what it is). */
const exitProcess: (code?: number) => never = process.exit.bind(process);

const server = startFakePromptrunServer({
  script: ({ body }) => {
    const inputs = (body.inputs ?? {}) as Record<string, unknown>;
    const message = String(inputs.message ?? "hello");
    const tokenDelayMs = typeof inputs.delayMs === "number" ? inputs.delayMs : 5;
    const words = (text: string) => text.split(/(?<= )/);
    if (message.startsWith("fail:"))
      return { tokens: words(message.slice(5)), tokenDelayMs, fail: "model exploded" };
    if (message.startsWith("json:")) {
      const text = message.slice(5);
      return {
        tokens: [text],
        tokenDelayMs,
        outputJson: JSON.parse(text),
        memory: { messages: 2, dropped: 1 },
      };
    }
    if (message.startsWith("tool:")) {
      const toolCalls = message
        .slice(5)
        .split(" | ")
        .map((call, index) => {
          const [name = "", ...json] = call.trim().split(" ");
          return { id: `call_${index + 1}`, name, arguments: JSON.parse(json.join(" ") || "{}") };
        });
      return {
        tokens: ["Checking."],
        tokenDelayMs,
        toolCalls,
        afterToolOutputs: (outputs) => ({
          tokens: [`Result: ${JSON.stringify(outputs.map((entry) => entry.output))}`],
          tokenDelayMs,
        }),
      };
    }
    if (message.startsWith("retry:"))
      return { tokens: words(message.slice(6)), tokenDelayMs, retryAfterTokens: 2 };
    return { tokens: words(message), tokenDelayMs };
  },
});
console.log(JSON.stringify({ url: server.url, apiKey: server.apiKey }));
process.on("SIGTERM", () => {
  void server.stop().then(() => exitProcess(0));
});
