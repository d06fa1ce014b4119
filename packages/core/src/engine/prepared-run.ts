/**
 * What a run needs before its first model call (or again when it continues after a restart or a
 * pause): its prompt version, its env (environment + run overrides), the resolved model, its
 * knowledge-base searches (retrieval.ts: the prompt's `retrieval:` made once, before the first
 * model call) and the rendered messages (core/src/rendering/run-request.ts).
 */
import type { PromptDefinition, RunRetrieval } from "@promptrun/contract";
import { loadEnvironmentVars } from "../environments/load-environment-vars.ts";
import { PromptrunError } from "../errors.ts";
import type { ResolvedModel } from "../models/model-gateway.ts";
import type { RunRecord } from "../ports.ts";
import { type RenderedRunRequest, renderRunRequest } from "../rendering/run-request.ts";
import type { SecretBox } from "../security/secret-box.ts";
import { RunKnowledge, retrievalRequestOf } from "./retrieval.ts";
import type { RunExecutorDeps } from "./run-executor.ts";

/** The run's request with its version, its tenant env and its resolved model. */
export interface PreparedRun extends RenderedRunRequest {
  definition: PromptDefinition;
  resolved: ResolvedModel;
  /** The environment's env vars overlaid with the run's: tool templates read them too. */
  tenantEnv: Record<string, string>;
  /** The run's searches so far and their chunk texts (knowledge_base tool calls add to them). */
  knowledge: RunKnowledge;
  /** The prompt's retrieval when this execution made it (to store and announce); null otherwise. */
  freshRetrieval: RunRetrieval | null;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The run's error when it could not be prepared (prompt gone, env vars undecryptable…). */
export const startErrorOf = (error: unknown): string =>
  PromptrunError.isInstance(error) ? error.message : `run could not start: ${messageOf(error)}`;

/** Loads what the run needs: version, env (environment + run overrides), model, messages. */
export async function prepare(
  deps: RunExecutorDeps,
  run: RunRecord,
  plaintextEnvVars: Record<string, string> | undefined,
): Promise<PreparedRun> {
  const { store, secrets } = deps;
  // Independent reads: issued together so an asynchronous store overlaps them.
  const versionRead = store.prompts.resolveVersion(run.tenantId, run.promptSlug, {
    kind: "id",
    id: run.promptVersionId,
  });
  const environmentRead = loadEnvironmentVars(store, secrets, run.tenantId, run.environment);
  // Whichever is not awaited first must not become an unhandled rejection.
  environmentRead.catch(() => {});
  const version = await versionRead;
  if (!version) {
    throw new PromptrunError(
      "not_found",
      `prompt ${run.promptSlug} version ${run.promptVersion} no longer exists`,
    );
  }
  const definition = version.definition;

  const tenantEnv = await tenantEnvOf(deps.secrets, run, environmentRead, plaintextEnvVars);

  const resolving = deps.models.resolve({
    modelRef: definition.model,
    tenantEnv,
    params: definition.params,
  });
  resolving.catch(() => {});
  const knowledge = await RunKnowledge.open(deps.knowledge, run.tenantId, run.retrieval ?? []);
  const { freshRetrieval, retrievalText } = await promptRetrieval(definition, run, knowledge, resolving);
  // The window's bound needs the rendered messages (their share of the context): read after them.
  const request = await renderRunRequest(
    definition,
    run.inputs,
    tenantEnv,
    { runs: store.runs, bound: deps.config.memory, channel: run },
    retrievalText,
  );
  return { definition, resolved: await resolving, tenantEnv, knowledge, freshRetrieval, ...request };
}

/**
 * The prompt's `retrieval:`: searched once per run, before its first model call (not again after a
 * pause or a restart: the stored search, the run's first, is reused). Searches only once the model
 * resolved, so a run that cannot call its model costs no embedding.
 */
async function promptRetrieval(
  definition: PromptDefinition,
  run: RunRecord,
  knowledge: RunKnowledge,
  resolving: Promise<unknown>,
): Promise<{ freshRetrieval: RunRetrieval | null; retrievalText: string | undefined }> {
  const spec = definition.retrieval;
  if (!spec) return { freshRetrieval: null, retrievalText: undefined };
  const stored = knowledge.retrieval[0];
  if (stored) return { freshRetrieval: null, retrievalText: knowledge.numbered(stored) };
  await resolving;
  const fresh = await knowledge.search(spec.knowledgeBase, retrievalRequestOf(spec, run.inputs));
  return { freshRetrieval: fresh, retrievalText: knowledge.numbered(fresh) };
}

/** The environment's env vars overlaid with the run's (plaintext, else decrypted from the record). */
async function tenantEnvOf(
  secrets: SecretBox,
  run: RunRecord,
  environmentRead: Promise<Record<string, string>>,
  plaintextEnvVars: Record<string, string> | undefined,
): Promise<Record<string, string>> {
  let environmentEnv: Record<string, string>;
  try {
    environmentEnv = await environmentRead;
  } catch (error) {
    if (PromptrunError.isInstance(error)) throw error;
    throw new PromptrunError(
      "internal",
      `the env vars of environment '${run.environment}' could not be decrypted (was PROMPTRUN_SECRET changed?)`,
    );
  }
  let runEnv = plaintextEnvVars;
  if (!runEnv && run.encryptedEnvVars) {
    try {
      runEnv = secrets.decryptJson<Record<string, string>>(run.encryptedEnvVars);
    } catch {
      throw new PromptrunError(
        "internal",
        "the run's envVars could not be decrypted (was PROMPTRUN_SECRET changed?)",
      );
    }
  }
  return { ...environmentEnv, ...runEnv };
}
