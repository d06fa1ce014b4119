export { startFakeAnthropic } from "./fake-anthropic.ts";
export { startFakeOpenAI } from "./fake-openai.ts";
export type {
  FakeErrorReply,
  FakeFloodReply,
  FakeReply,
  FakeRequest,
  FakeScript,
  FakeStreamReply,
  FakeUsage,
} from "./fake-provider-script.ts";
export type { FakeProviderServer, FakeStreamRecord } from "./fake-provider-server.ts";
