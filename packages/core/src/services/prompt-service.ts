import { type PromptDefinition, type PromptFile, promptFileSchema, tagSchema } from "@promptrun/contract";
import { invalid, notFound, PromptrunError } from "../errors.ts";
import type { Clock, Store, VersionSelector } from "../ports.ts";
import type { PromptService } from "../services.ts";
import { assertTemplatesDeclared, validateInputs } from "../templating/template.ts";
import { canonicalHash } from "./canonical-json.ts";
import { formatValidationError } from "./format-validation-error.ts";
import { boundedPage, clampPage } from "./page.ts";
import { describeMissingVersion, parseVersionSegment } from "./parse-version-segment.ts";
import { tagsForVersion, toPromptSummary, toPromptVersion } from "./to-prompt-version.ts";
import { uuidv7 } from "./uuidv7.ts";

export interface PromptServiceDependencies {
  store: Store;
  clock: Clock;
  newId?: () => string;
}

const labelOf = (file: unknown, index: number): string =>
  typeof file === "object" && file !== null && "slug" in file && typeof file.slug === "string"
    ? file.slug
    : `#${index + 1}`;

/** Re-throws a PromptrunError with the prompt it concerns named first. */
const inPrompt = <T>(slug: string, check: () => T): T => {
  try {
    return check();
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw invalid(`prompt '${slug}': ${error.message}`);
    throw error;
  }
};

/** Schema, templates and input defaults of one file; every message names the prompt and field. */
function parsePromptFile(file: unknown, index: number): PromptFile {
  const result = promptFileSchema.safeParse(file);
  if (!result.success)
    throw invalid(`prompt '${labelOf(file, index)}': ${formatValidationError(result.error, "prompt file")}`);
  const prompt = result.data;
  inPrompt(prompt.slug, () => assertTemplatesDeclared(prompt));
  for (const [name, declaration] of Object.entries(prompt.inputs)) {
    if (declaration.default === undefined) continue;
    const withoutDefault = { type: declaration.type };
    try {
      validateInputs({ [name]: withoutDefault }, { [name]: declaration.default });
    } catch (error) {
      if (!PromptrunError.isInstance(error)) throw error;
      throw invalid(`prompt '${prompt.slug}': default of ${error.message}`);
    }
  }
  return prompt;
}

export function createPromptService(dependencies: PromptServiceDependencies): PromptService {
  const { store, clock } = dependencies;
  const newId = dependencies.newId ?? (() => uuidv7(clock.now().getTime()));

  const missing = async (tenantId: string, slug: string, selector: VersionSelector) => {
    const prompt = await store.prompts.getPrompt(tenantId, slug);
    return notFound(prompt ? describeMissingVersion(slug, selector) : `prompt '${slug}' not found`);
  };

  return {
    async push(tenantId, files) {
      if (files.length === 0) throw invalid("no prompt files to push");
      // Validate every file before pushing any, so a bad file leaves nothing half-pushed.
      const prompts = files.map((file, index) => parsePromptFile(file, index));
      const seen = new Set<string>();
      for (const prompt of prompts) {
        if (seen.has(prompt.slug))
          throw invalid(`prompt '${prompt.slug}' appears more than once in one push`);
        seen.add(prompt.slug);
      }
      if (!(await store.tenants.get(tenantId))) throw notFound(`tenant '${tenantId}' not found`);

      const results = [];
      for (const { slug, tags, ...definition } of prompts) {
        const pushed = await store.prompts.pushVersion({
          tenantId,
          slug,
          definition: definition satisfies PromptDefinition,
          contentHash: canonicalHash(definition),
          tags,
          newPromptId: newId(),
          newVersionId: newId(),
          at: clock.now(),
        });
        results.push({
          slug,
          version: pushed.version.version,
          id: pushed.version.id,
          tags: pushed.tags,
          created: pushed.created,
        });
      }
      return results;
    },

    async tag(tenantId, slug, versionSegment, tag) {
      const parsedTag = tagSchema.safeParse(tag);
      if (!parsedTag.success)
        throw invalid(`tag '${tag}': ${parsedTag.error.issues[0]?.message ?? "invalid"}`);
      const selector = parseVersionSegment(versionSegment);
      const version = await store.prompts.setTag(tenantId, slug, selector, parsedTag.data, clock.now());
      if (!version) throw await missing(tenantId, slug, selector);
      return {
        slug,
        version: version.version,
        id: version.id,
        tags: await store.prompts.tagsOf(version.id),
        created: false,
      };
    },

    async get(tenantId, slug, versionSegment) {
      const selector = parseVersionSegment(versionSegment);
      const version = await store.prompts.resolveVersion(tenantId, slug, selector);
      if (!version) throw await missing(tenantId, slug, selector);
      return toPromptVersion(version, await store.prompts.tagsOf(version.id));
    },

    async list(tenantId, page) {
      const result = await store.prompts.listPrompts(tenantId, clampPage(page));
      return { items: result.items.map(toPromptSummary), nextCursor: result.nextCursor };
    },

    async versions(tenantId, slug, page) {
      const prompt = await store.prompts.getPrompt(tenantId, slug);
      if (!prompt) throw notFound(`prompt '${slug}' not found`);
      const { cursor, limit } = clampPage(page);
      return boundedPage(
        (pageLimit) => store.prompts.listVersions(tenantId, slug, { cursor, limit: pageLimit }),
        (version) => toPromptVersion(version, tagsForVersion(prompt, version.version)),
        limit,
      );
    },
  };
}
