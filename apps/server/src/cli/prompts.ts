import { readPromptFiles } from "../prompt-files.ts";
import { type CommandTable, forTenant, need } from "./command.ts";

/** `prompts …`: push prompt files, tag versions. */
export const promptCommands: CommandTable = {
  async "prompts push"({ config, flags, args, print }) {
    const path = need(args[0], "<file-or-dir>");
    const tenantId = need(flags.tenant, "--tenant <id>");
    const files = readPromptFiles(path);
    const results = await forTenant(config, tenantId, (services) =>
      services.prompts.push(tenantId, files, "cli"),
    );
    print(
      results.map(({ slug, version, id, tags }) => ({ slug, version, id, tags })),
      results
        .map(
          (r) =>
            `${r.slug}@${r.version} ${r.created ? "created" : "unchanged"} ${r.id}${r.tags.length ? ` [${r.tags.join(", ")}]` : ""}`,
        )
        .join("\n"),
    );
  },

  async "prompts tag"({ config, flags, args, print }) {
    const [slug, version, tag] = [
      need(args[0], "<slug>"),
      need(args[1], "<version>"),
      need(args[2], "<tag>"),
    ];
    const tenantId = need(flags.tenant, "--tenant <id>");
    const result = await forTenant(config, tenantId, (services) =>
      services.prompts.tag(tenantId, slug, version, tag, "cli"),
    );
    print(
      { slug: result.slug, version: result.version, id: result.id, tags: result.tags },
      `${result.slug}@${result.version} tagged ${tag}`,
    );
  },
};
