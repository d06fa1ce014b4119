/** What every CLI command gets, and the helpers the command groups share. */
import type { ServerConfig } from "../env.ts";
import { openRuntime, type Runtime } from "../server.ts";

/** Wrong arguments: the message is followed by the usage text, and the exit code is 2. */
export class UsageError extends Error {}

export interface CliFlags {
  json: boolean;
  inactive: boolean;
  tenant?: string | undefined;
  events?: string | undefined;
  webhook?: string | undefined;
  run?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  description?: string | undefined;
  "embedding-model"?: string | undefined;
  "max-tokens"?: string | undefined;
  overlap?: string | undefined;
  metadata?: string | undefined;
  "external-id"?: string | undefined;
  "top-k"?: string | undefined;
  mode?: string | undefined;
}

export interface CommandContext {
  config: ServerConfig;
  flags: CliFlags;
  /** Positionals after `<group> <action>`. */
  args: string[];
  /** Prints the JSON document with --json, else the human text. */
  print(json: unknown, human: string): void;
}

export type Command = (context: CommandContext) => Promise<void>;

/** Commands by `<group> <action>` (or `<group>` alone). */
export type CommandTable = Record<string, Command>;

export const need = (value: string | undefined, what: string): string => {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
};

export async function withRuntime<T>(
  config: ServerConfig,
  action: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = await openRuntime(config);
  try {
    return await action(runtime);
  } finally {
    await runtime.close();
  }
}

/**
 * Tenant-scoped commands check the tenant first, so an unknown id is reported as an unknown
 * tenant rather than as whatever the command looks up next (an environment, a prompt, nothing).
 */
export async function forTenant<T>(
  config: ServerConfig,
  tenantId: string,
  action: (services: Runtime["promptrun"]["services"]) => Promise<T>,
): Promise<T> {
  return withRuntime(config, async (runtime) => {
    await runtime.promptrun.services.tenants.get(tenantId);
    return action(runtime.promptrun.services);
  });
}

/** Ends the process with a code (named so it reads as what it is). */
export const exitProcess: (code?: number) => never = process.exit.bind(process);
