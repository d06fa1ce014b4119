/**
 * The checks of a run request that create-run and render share, called in the documented order
 * (docs/PRODUCT-RULES.md "Status codes and error order"): the version (404), the body against its
 * schema, the inputs against the version's declarations and the model's accepted fields (400),
 * then the environment (400). One implementation, so render answers a bad request exactly as
 * create-run does.
 */
import type { CreateRunRequest } from "@promptrun/contract";
import type { z } from "zod";
import { DEFAULT_ENVIRONMENT } from "../environments/default-environment.ts";
import { invalid, notFound } from "../errors.ts";
import { assertModelTakesPromptFields } from "../models/call-options.ts";
import type { EnvironmentRecord, PromptVersionRecord, Store } from "../ports.ts";
import { validateInputs } from "../templating/template.ts";
import { formatValidationError } from "./format-validation-error.ts";
import { describeMissingVersion, parseVersionSegment } from "./parse-version-segment.ts";

/** 1. The prompt version a segment names (number, tag, `latest`, id); not_found otherwise. */
export async function resolveRunVersion(
  store: Pick<Store, "prompts">,
  tenantId: string,
  slug: string,
  versionSegment: string,
): Promise<PromptVersionRecord> {
  const selector = parseVersionSegment(versionSegment);
  const version = await store.prompts.resolveVersion(tenantId, slug, selector);
  if (version) return version;
  const prompt = await store.prompts.getPrompt(tenantId, slug);
  throw notFound(prompt ? describeMissingVersion(slug, selector) : `prompt '${slug}' not found`);
}

/** The body fields every run request has (create-run's, or render's subset of them). */
type RunRequestFields = Pick<CreateRunRequest, "inputs" | "environment">;

/**
 * 2. The body against `schema`, then 3. its inputs against the version's declarations (defaults
 * applied) and the prompt fields the model's provider library refuses.
 */
export function checkRunBody<Request extends RunRequestFields>(
  version: PromptVersionRecord,
  schema: z.ZodType<Request>,
  body: unknown,
): { request: Request; inputs: Record<string, unknown> } {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalid(formatValidationError(parsed.error));
  const request = parsed.data;
  const inputs = validateInputs(version.definition.inputs, request.inputs);
  const { definition } = version;
  assertModelTakesPromptFields({
    modelRef: definition.model,
    params: definition.params,
    providerOptions: definition.providerOptions,
  });
  return { request, inputs };
}

/** 4. The request's environment (default: DEFAULT_ENVIRONMENT), which must exist. */
export async function requireRunEnvironment(
  store: Pick<Store, "environments">,
  tenantId: string,
  name: string | null | undefined,
): Promise<{ name: string; record: EnvironmentRecord }> {
  const environment = name ?? DEFAULT_ENVIRONMENT;
  const record = await store.environments.get(tenantId, environment);
  if (!record) throw invalid(`environment: unknown environment '${environment}'`);
  return { name: environment, record };
}
