import type { TestPrompt } from "@promptrun/testing";

/** The repository's `order-status` prompt (dev:echo with the client tool `lookup_order`), as the demo tenant gets it. */
export async function loadOrderStatusPrompt(): Promise<TestPrompt> {
  const file = new URL("../../../../prompts/order-status.yaml", import.meta.url);
  return Bun.YAML.parse(await Bun.file(file).text()) as TestPrompt;
}
