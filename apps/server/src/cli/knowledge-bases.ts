import { statSync } from "node:fs";
import { basename, extname } from "node:path";
import type { DocumentUpload, KnowledgeService } from "@promptrun/core";
import type { ServerConfig } from "../env.ts";
import { type CliFlags, type CommandTable, forTenant, need, UsageError } from "./command.ts";

/** Media types by extension (docs/KNOWLEDGE.md); another extension is left to the server (415). */
const MEDIA_TYPES: Record<string, string> = {
  ".txt": "text/plain",
  ".text": "text/plain",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

export const mediaTypeOfPath = (path: string): string | undefined => MEDIA_TYPES[extname(path).toLowerCase()];

const integerFlag = (value: string | undefined, name: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${name} must be a whole number`);
  return Number(value);
};

/** The create body from `kb create <slug>` and its flags (the service checks it). */
export function createBodyOf(slug: string, flags: CliFlags): Record<string, unknown> {
  const maxTokens = integerFlag(flags["max-tokens"], "--max-tokens");
  const overlap = integerFlag(flags.overlap, "--overlap");
  if (overlap !== undefined && maxTokens === undefined) throw new UsageError("--overlap needs --max-tokens");
  return {
    slug,
    ...(flags.description !== undefined ? { description: flags.description } : {}),
    ...(flags["embedding-model"] !== undefined ? { embeddingModel: flags["embedding-model"] } : {}),
    ...(maxTokens !== undefined
      ? { chunking: { maxTokens, ...(overlap !== undefined ? { overlap } : {}) } }
      : {}),
  };
}

function metadataOf(flags: CliFlags): unknown {
  if (flags.metadata === undefined) return undefined;
  try {
    return JSON.parse(flags.metadata);
  } catch {
    throw new UsageError('--metadata must be a JSON object, e.g. \'{"team":"support"}\'');
  }
}

/**
 * One upload per file, read from disk; a file over the upload limit is refused before it is read.
 * `--external-id` names one document, so it takes exactly one file.
 */
export async function uploadsOf(
  paths: string[],
  flags: CliFlags,
  maxUploadBytes: number,
): Promise<DocumentUpload[]> {
  if (paths.length === 0) throw new UsageError("missing <files…>");
  if (flags["external-id"] !== undefined && paths.length > 1) {
    throw new UsageError("--external-id names one document: give one file");
  }
  const metadata = metadataOf(flags);
  const uploads: DocumentUpload[] = [];
  for (const path of paths) {
    const size = statSync(path, { throwIfNoEntry: false })?.size;
    if (size === undefined) throw new UsageError(`${path}: no such file`);
    if (size > maxUploadBytes) {
      throw new UsageError(
        `${path}: ${size} bytes is over the upload limit of ${maxUploadBytes} (PROMPTRUN_MAX_UPLOAD_BYTES)`,
      );
    }
    const mediaType = mediaTypeOfPath(path);
    uploads.push({
      content: new Uint8Array(await Bun.file(path).arrayBuffer()),
      filename: basename(path),
      ...(mediaType ? { mediaType } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      ...(flags["external-id"] !== undefined ? { externalId: flags["external-id"] } : {}),
    });
  }
  return uploads;
}

/** The search body from `kb search <slug> <query>` and its flags. */
export function searchBodyOf(query: string, flags: CliFlags): Record<string, unknown> {
  const topK = integerFlag(flags["top-k"], "--top-k");
  return {
    query,
    ...(topK !== undefined ? { topK } : {}),
    ...(flags.mode !== undefined ? { mode: flags.mode } : {}),
  };
}

const withKnowledge = <T>(
  config: ServerConfig,
  flags: CliFlags,
  action: (knowledge: KnowledgeService, tenantId: string) => Promise<T>,
): Promise<T> => {
  const tenantId = need(flags.tenant, "--tenant <id>");
  return forTenant(config, tenantId, (services) => action(services.knowledge, tenantId));
};

/** `kb …`: knowledge bases from the command line (docs/KNOWLEDGE.md). */
export const knowledgeBaseCommands: CommandTable = {
  async "kb create"({ config, flags, args, print }) {
    const body = createBodyOf(need(args[0], "<slug>"), flags);
    const created = await withKnowledge(config, flags, (knowledge, tenantId) =>
      knowledge.create(tenantId, body),
    );
    print(
      created,
      `${created.slug} created (${created.embeddingModel}, ${created.chunking.maxTokens} tokens per chunk, overlap ${created.chunking.overlap})`,
    );
  },

  async "kb list"({ config, flags, print }) {
    const page = await withKnowledge(config, flags, (knowledge, tenantId) =>
      knowledge.list(tenantId, { limit: 200 }),
    );
    print(
      page.items,
      page.items
        .map(
          (kb) => `${kb.slug}  ${kb.embeddingModel}  ${kb.documentCount} documents  ${kb.chunkCount} chunks`,
        )
        .join("\n"),
    );
  },

  async "kb add"({ config, flags, args, print }) {
    const slug = need(args[0], "<slug>");
    const uploads = await uploadsOf(args.slice(1), flags, config.engine.knowledge.maxUploadBytes);
    const accepted = await withKnowledge(config, flags, async (knowledge, tenantId) => {
      const results = [];
      for (const upload of uploads) {
        results.push({
          filename: upload.filename as string,
          ...(await knowledge.addDocument(tenantId, slug, upload)),
        });
      }
      return results;
    });
    print(accepted, accepted.map((doc) => `${doc.filename} ${doc.id} ${doc.status}`).join("\n"));
  },

  async "kb search"({ config, flags, args, print }) {
    const slug = need(args[0], "<slug>");
    const body = searchBodyOf(need(args[1], "<query>"), flags);
    const result = await withKnowledge(config, flags, (knowledge, tenantId) =>
      knowledge.search(tenantId, slug, body),
    );
    print(
      result,
      result.items
        .map((hit, index) => `[${index + 1}] ${hit.filename} (${hit.score.toFixed(4)})\n${hit.text}`)
        .join("\n\n") || "no results",
    );
  },

  async "kb rm"({ config, flags, args, print }) {
    const slug = need(args[0], "<slug>");
    await withKnowledge(config, flags, (knowledge, tenantId) => knowledge.delete(tenantId, slug));
    print({ deleted: slug }, `${slug} deleted`);
  },
};
