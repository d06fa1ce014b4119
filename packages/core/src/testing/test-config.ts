import { defaultConfig, type PromptrunConfig } from "../config.ts";

export const TEST_SECRET = "test-secret-0123456789abcdef0123456789abcdef";

/** defaultConfig with a fixed test secret; override anything. */
export const createTestConfig = (overrides: Partial<PromptrunConfig> = {}): PromptrunConfig =>
  defaultConfig({ secret: TEST_SECRET, ...overrides });
