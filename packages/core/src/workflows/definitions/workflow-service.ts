/**
 * Workflow definitions (docs/WORKFLOWS.md "Workflow files"): pushed, versioned and tagged like
 * prompts. A push checks every file (push-checks.ts) before writing any, so a bad file leaves
 * nothing half-pushed; an identical definition creates no version.
 */
import { setWorkflowTagRequestSchema } from "@promptrun/contract";
import { invalid, notFound } from "../../errors.ts";
import type { Clock, Store, VersionSelector } from "../../ports.ts";
import { formatValidationError } from "../../services/format-validation-error.ts";
import { boundedPage, clampPage } from "../../services/page.ts";
import { parseVersionSegment } from "../../services/parse-version-segment.ts";
import { requireTag } from "../../services/tag-move.ts";
import { uuidv7 } from "../../services/uuidv7.ts";
import type { WorkflowService } from "../../services.ts";
import { checkTenantReferences, parseWorkflowFile } from "./push-checks.ts";
import {
  describeMissingWorkflowVersion,
  toWorkflowSummary,
  toWorkflowVersion,
  workflowTagsForVersion,
} from "./to-workflow-version.ts";

export interface WorkflowServiceDependencies {
  store: Store;
  clock: Clock;
  newId?: () => string;
}

export function createWorkflowService(dependencies: WorkflowServiceDependencies): WorkflowService {
  const { store, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7(clock.now().getTime()));

  const missing = async (tenantId: string, slug: string, selector: VersionSelector) => {
    const workflow = await store.workflows.getWorkflow(tenantId, slug);
    return notFound(
      workflow ? describeMissingWorkflowVersion(slug, selector) : `workflow '${slug}' not found`,
    );
  };

  return {
    async push(tenantId, files) {
      if (files.length === 0) throw invalid("no workflow files to push");
      const workflows = [];
      for (const [index, file] of files.entries()) workflows.push(await parseWorkflowFile(file, index));
      const seen = new Set<string>();
      for (const { slug } of workflows) {
        if (seen.has(slug)) throw invalid(`workflow '${slug}' appears more than once in one push`);
        seen.add(slug);
      }
      if (!(await store.tenants.get(tenantId))) throw notFound(`tenant '${tenantId}' not found`);
      for (const workflow of workflows) await checkTenantReferences(store, tenantId, workflow);
      const results = [];
      for (const { slug, tags, definition, contentHash } of workflows) {
        const pushed = await store.workflows.pushVersion({
          tenantId,
          slug,
          definition,
          contentHash,
          tags,
          newWorkflowId: newId(),
          newVersionId: newId(),
          at: clock.now(),
        });
        const { version } = pushed.version;
        results.push({ slug, version, id: pushed.version.id, tags: pushed.tags, created: pushed.created });
      }
      return results;
    },

    async tag(tenantId, slug, tag, body) {
      const parsedTag = requireTag(tag);
      const parsed = setWorkflowTagRequestSchema.safeParse(body);
      if (!parsed.success) throw invalid(formatValidationError(parsed.error));
      const { version: number } = parsed.data;
      const version = await store.workflows.setTag(tenantId, slug, number, parsedTag, clock.now());
      if (!version) throw await missing(tenantId, slug, { kind: "number", version: number });
      const tags = await store.workflows.tagsOf(version.id);
      return { slug, version: version.version, id: version.id, tags, created: false };
    },

    async get(tenantId, slug, versionSegment) {
      const selector = parseVersionSegment(versionSegment);
      const version = await store.workflows.resolveVersion(tenantId, slug, selector);
      if (!version) throw await missing(tenantId, slug, selector);
      return toWorkflowVersion(version, await store.workflows.tagsOf(version.id));
    },

    async list(tenantId, page) {
      const result = await store.workflows.listWorkflows(tenantId, clampPage(page));
      return { items: result.items.map(toWorkflowSummary), nextCursor: result.nextCursor };
    },

    async versions(tenantId, slug, page) {
      const workflow = await store.workflows.getWorkflow(tenantId, slug);
      if (!workflow) throw notFound(`workflow '${slug}' not found`);
      const { cursor, limit } = clampPage(page);
      return boundedPage(
        (pageLimit) => store.workflows.listVersions(tenantId, slug, { cursor, limit: pageLimit }),
        (version) => toWorkflowVersion(version, workflowTagsForVersion(workflow, version.version)),
        limit,
      );
    },
  };
}
