import { readPromptFiles } from "../prompt-files.ts";
import type { Runtime } from "../server.ts";
import { type CommandTable, forTenant, need } from "./command.ts";

type WorkflowService = Runtime["promptrun"]["services"]["workflows"];
type WorkflowPushResult = Awaited<ReturnType<WorkflowService["push"]>>[number];
type WorkflowSummary = Awaited<ReturnType<WorkflowService["list"]>>["items"][number];

/** `slug@version created|unchanged id [tags]`, one line per pushed file. */
export const describePushed = (results: WorkflowPushResult[]): string =>
  results
    .map(
      (r) =>
        `${r.slug}@${r.version} ${r.created ? "created" : "unchanged"} ${r.id}${r.tags.length ? ` [${r.tags.join(", ")}]` : ""}`,
    )
    .join("\n");

/** Every workflow of the tenant, page after page (slug order). */
export async function listAllWorkflows(
  workflows: WorkflowService,
  tenantId: string,
): Promise<WorkflowSummary[]> {
  const all: WorkflowSummary[] = [];
  let cursor: string | null = null;
  do {
    const page = await workflows.list(tenantId, { cursor, limit: 200 });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

const describeSummary = (workflow: WorkflowSummary): string => {
  const tags = Object.entries(workflow.tags)
    .map(([tag, version]) => `${tag}→${version}`)
    .join(", ");
  return `${workflow.slug}  v${workflow.latestVersion}${tags ? `  [${tags}]` : ""}${workflow.description ? `  ${workflow.description}` : ""}`;
};

/** `workflows …`: push workflow files (YAML or JSON, as prompts), tag versions, list. */
export const workflowCommands: CommandTable = {
  async "workflows push"({ config, flags, args, print }) {
    const path = need(args[0], "<file-or-dir>");
    const tenantId = need(flags.tenant, "--tenant <id>");
    const files = readPromptFiles(path);
    const results = await forTenant(config, tenantId, (services) => services.workflows.push(tenantId, files));
    print(results, describePushed(results));
  },

  async "workflows tag"({ config, flags, args, print }) {
    const [slug, version, tag] = [
      need(args[0], "<slug>"),
      need(args[1], "<version>"),
      need(args[2], "<tag>"),
    ];
    const tenantId = need(flags.tenant, "--tenant <id>");
    const result = await forTenant(config, tenantId, async (services) => {
      // <version> may be a number, `latest`, a tag or an id: the tag moves to the version it names.
      const target = await services.workflows.get(tenantId, slug, version);
      return services.workflows.tag(tenantId, slug, tag, { version: target.version });
    });
    print(
      { slug: result.slug, version: result.version, id: result.id, tags: result.tags },
      `${result.slug}@${result.version} tagged ${tag}`,
    );
  },

  async "workflows list"({ config, flags, print }) {
    const tenantId = need(flags.tenant, "--tenant <id>");
    const workflows = await forTenant(config, tenantId, (services) =>
      listAllWorkflows(services.workflows, tenantId),
    );
    print(workflows, workflows.length ? workflows.map(describeSummary).join("\n") : "no workflows");
  },
};
