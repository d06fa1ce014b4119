import { type CommandTable, forTenant, need, UsageError } from "./command.ts";

/** `envs …`: environments and their env vars. */
export const envCommands: CommandTable = {
  async "envs set"({ config, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const environment = need(args[1], "<environment>");
    const pairs = args.slice(2);
    if (pairs.length === 0) throw new UsageError("give at least one KEY=VALUE");
    const entries = pairs.map((pair): [string, string] => {
      const index = pair.indexOf("=");
      if (index <= 0) throw new UsageError(`'${pair.split("=")[0]}' is not KEY=VALUE`);
      return [pair.slice(0, index), pair.slice(index + 1)];
    });
    // fromEntries defines own keys: `__proto__=x` reaches the key check instead of vanishing.
    const values: Record<string, string> = Object.fromEntries(entries);
    const result = await forTenant(config, tenantId, (services) =>
      services.environments.setEnvVars(tenantId, environment, values),
    );
    print(
      { environment: result.name, keys: result.envVarKeys },
      `${result.name}: ${result.envVarKeys.join(", ")}`,
    );
  },

  async "envs list"({ config, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const environments = await forTenant(config, tenantId, (services) =>
      services.environments.list(tenantId),
    );
    print(
      environments,
      environments.map((e) => `${e.name}: ${e.envVarKeys.join(", ") || "(no env vars)"}`).join("\n"),
    );
  },
};
