/**
 * Fakes of the knowledge parts for core's unit tests: a UTF-8 "extractor", a paragraph chunker, a
 * bag-of-words embedding and an extension-based type detector. The real parts are tested where
 * they live; these keep the service, worker and search tests about their own rules.
 */
import type { DocumentMediaType } from "@promptrun/contract";
import type { MediaTypeDetector } from "./knowledge-service.ts";
import {
  type Chunker,
  EmbeddingError,
  type EmbeddingModel,
  type EmbeddingModelResolver,
  ExtractionError,
  type TextExtractor,
} from "./ports.ts";

export const FAKE_DIMENSIONS = 64;

/** Text as UTF-8; a text starting with "BROKEN" fails like an unreadable PDF. */
export const fakeExtract: TextExtractor = async (content) => {
  const text = new TextDecoder().decode(content);
  if (text.startsWith("BROKEN")) throw new ExtractionError("the PDF could not be parsed: bad xref table");
  return { text };
};

/** One chunk per paragraph (blank-line separated); tokens = words. */
export const fakeChunk: Chunker = (text) =>
  text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== "")
    .map((paragraph) => ({ text: paragraph, tokens: paragraph.split(/\s+/).length }));

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Each word hashed to one of FAKE_DIMENSIONS buckets: texts sharing words are close. */
export function bagOfWords(text: string): Float32Array {
  const vector = new Float32Array(FAKE_DIMENSIONS);
  for (const word of words(text)) {
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ (char.codePointAt(0) as number), 16777619);
    vector[(hash >>> 0) % FAKE_DIMENSIONS]! += 1;
  }
  return vector;
}

export interface FakeEmbedding extends EmbeddingModel {
  /** Every batch embedded, in order. */
  calls: string[][];
}

/** `fake:bow` embeds by bagOfWords at $0.001 a text; texts containing "EMBEDFAIL" fail the call. */
export function fakeEmbeddingModel(): FakeEmbedding {
  const calls: string[][] = [];
  return {
    ref: "fake:bow",
    calls,
    async embed(texts) {
      calls.push(texts);
      if (texts.some((text) => text.includes("EMBEDFAIL"))) {
        throw new EmbeddingError("fake:bow gave up after 3 attempts: HTTP 500");
      }
      return {
        vectors: texts.map(bagOfWords),
        tokens: texts.reduce((sum, text) => sum + words(text).length, 0),
        cost: { total: 0.001 * texts.length, priced: true },
      };
    },
  };
}

/** Resolves `fake:bow` (and `dev:hash`, the default) to `model`; anything else is unknown. */
export const fakeResolver =
  (model: EmbeddingModel = fakeEmbeddingModel()): EmbeddingModelResolver =>
  (ref) => {
    if (ref === "fake:bow" || ref === "dev:hash") return model;
    throw new EmbeddingError(`unknown embedding provider '${ref.split(":")[0]}'`);
  };

const BY_EXTENSION: Record<string, DocumentMediaType> = {
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  pdf: "application/pdf",
};

/** By extension; a .pdf must start with %PDF (an extension that lies is refused). */
export const fakeDetectMediaType: MediaTypeDetector = ({ filename, declared, head }) => {
  const type = BY_EXTENSION[filename.split(".").pop()?.toLowerCase() ?? ""];
  if (declared !== undefined && declared !== type) return null;
  if (type === "application/pdf" && new TextDecoder().decode(head.subarray(0, 4)) !== "%PDF") return null;
  return type ?? null;
};

export const utf8 = (text: string) => new TextEncoder().encode(text);
