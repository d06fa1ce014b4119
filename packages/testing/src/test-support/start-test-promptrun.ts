/**
 * Test support of this package (not exported): the in-process Promptrun its own tests run
 * against, with the one prompt they use and a client holding the tenant's key.
 */
import { createPromptrunClient, type PromptrunClient } from "@promptrun/client";
import { type StartPromptrunOptions, startPromptrun, type TestPromptrun } from "../start-promptrun.ts";

export interface TestPromptrunWithClient {
  promptrun: TestPromptrun;
  client: PromptrunClient;
}

/**
 * startPromptrun with the "chat" prompt (and `morePrompts`) (input `message`, a system line, then the message), and
 * a client for it. `trailingSlash` gives the client a base URL ending in "/".
 */
export async function startTestPromptrun(
  options: { trailingSlash?: boolean; morePrompts?: StartPromptrunOptions["prompts"] } = {},
): Promise<TestPromptrunWithClient> {
  const promptrun = await startPromptrun({
    prompts: [
      {
        slug: "chat",
        inputs: { message: { type: "string" } },
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "{{message}}" },
        ],
      },
      ...(options.morePrompts ?? []),
    ],
  });
  const baseUrl = options.trailingSlash ? `${promptrun.url}/` : promptrun.url;
  return { promptrun, client: createPromptrunClient({ baseUrl, apiKey: promptrun.apiKey }) };
}
