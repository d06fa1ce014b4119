import type { TestPrompt } from "@promptrun/testing";

/** The example's own prompt file, with the model left to the test's scripted model. */
export async function loadChatPrompt(): Promise<TestPrompt> {
  const file = new URL("../../prompts/chat.yaml", import.meta.url);
  const { model: _model, ...prompt } = Bun.YAML.parse(await Bun.file(file).text()) as TestPrompt;
  return prompt;
}
