import type { TestPrompt } from "@promptrun/testing";

/** The repository's `chat` prompt (what the demo tenant gets), with the model left to the test's scripted model. */
export async function loadChatPrompt(): Promise<TestPrompt> {
  const file = new URL("../../../../prompts/chat.yaml", import.meta.url);
  const { model: _model, ...prompt } = Bun.YAML.parse(await Bun.file(file).text()) as TestPrompt;
  return prompt;
}
