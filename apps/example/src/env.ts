import { z } from "zod";

/** The example's configuration: the only place it reads the environment. */
export interface ExampleEnv {
  promptrunUrl: string;
  apiKey: string;
  host: string;
  port: number;
  prompt: { slug: string; version: string };
}

const envSchema = z.object({
  PROMPTRUN_URL: z.url().default("http://127.0.0.1:3000"),
  PROMPTRUN_API_KEY: z.string({ error: "PROMPTRUN_API_KEY is required (a tenant API key)" }).min(1),
  HOST: z.string().default("127.0.0.1"),
  EXAMPLE_PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  EXAMPLE_PROMPT: z.string().default("chat"),
  EXAMPLE_PROMPT_VERSION: z.string().default("latest"),
});

/** Parses the environment; throws one line naming the variable when it is invalid. */
export function readExampleEnv(env: Record<string, string | undefined>): ExampleEnv {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid configuration: ${String(issue?.path[0] ?? "")}: ${issue?.message ?? "invalid"}`);
  }
  const values = parsed.data;
  return {
    promptrunUrl: values.PROMPTRUN_URL,
    apiKey: values.PROMPTRUN_API_KEY,
    host: values.HOST,
    port: values.EXAMPLE_PORT,
    prompt: { slug: values.EXAMPLE_PROMPT, version: values.EXAMPLE_PROMPT_VERSION },
  };
}
