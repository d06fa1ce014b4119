export { startFakeAnthropic } from "./fake-anthropic.ts";
export { startFakeOpenAI } from "./fake-openai.ts";
export type {
  FakeReply,
  FakeRequest,
  FakeScript,
  FakeToolCall,
  FakeUsage,
} from "./fake-provider-script.ts";
export type { FakeProviderServer } from "./fake-provider-server.ts";
