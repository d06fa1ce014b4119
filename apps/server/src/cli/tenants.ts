import { type CommandTable, forTenant, need, UsageError, withRuntime } from "./command.ts";

/** `tenants …` and `keys …`: tenants, their subscription and their API keys. */
export const tenantCommands: CommandTable = {
  async "tenants create"({ config, flags, args, print }) {
    const name = need(args[0], "<name>");
    const created = await withRuntime(config, (runtime) =>
      runtime.promptrun.services.tenants.create(name, { active: !flags.inactive }),
    );
    print(
      { tenant: { id: created.tenant.id, name: created.tenant.name }, apiKey: created.apiKey },
      `tenant ${created.tenant.id} (${created.tenant.name})\nAPI key (shown once): ${created.apiKey}`,
    );
  },

  async "tenants list"({ config, print }) {
    const tenants = await withRuntime(config, (runtime) => runtime.promptrun.services.tenants.list());
    print(
      tenants,
      tenants.map((t) => `${t.id}  ${t.subscriptionActive ? "active  " : "inactive"}  ${t.name}`).join("\n"),
    );
  },

  async "tenants subscription"({ config, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const state = need(args[1], "active|inactive");
    if (state !== "active" && state !== "inactive")
      throw new UsageError("subscription must be active or inactive");
    const tenant = await withRuntime(config, (runtime) =>
      runtime.promptrun.services.tenants.setSubscription(tenantId, state === "active"),
    );
    print({ tenant }, `tenant ${tenant.id} subscription ${state}`);
  },
};

export const keyCommands: CommandTable = {
  async "keys create"({ config, args, print }) {
    const tenantId = need(args[0], "<tenantId>");
    const { apiKey } = await forTenant(config, tenantId, (services) =>
      services.tenants.createApiKey(tenantId),
    );
    print({ apiKey }, `API key (shown once): ${apiKey}`);
  },

  async "keys revoke"({ config, args, print }) {
    const match = need(args[0], "<apiKey-or-prefix>");
    const result = await withRuntime(config, (runtime) =>
      runtime.promptrun.services.tenants.revokeApiKey(match),
    );
    print(result, `revoked ${result.revoked} key(s)`);
  },
};
