import { describe, expect, test } from "bun:test";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { chunkText } from "./chunk-text.ts";

/** Deterministic prose: numbered sentences, so each one is findable. */
function prose(sentenceCount: number, paragraphEvery = 7): { text: string; sentences: string[] } {
  const words = [
    "policy",
    "leave",
    "manager",
    "approval",
    "office",
    "remote",
    "badge",
    "report",
    "travel",
    "expense",
  ];
  const sentences: string[] = [];
  let text = "";
  for (let i = 0; i < sentenceCount; i++) {
    const length = 5 + ((i * 7) % 17);
    const body = Array.from({ length }, (_, w) => words[(i * 3 + w * 5) % words.length]).join(" ");
    const sentence = `Sentence ${i} says the ${body}.`;
    sentences.push(sentence);
    text += sentence + ((i + 1) % paragraphEvery === 0 ? "\n\n" : " ");
  }
  return { text, sentences };
}

const settings = { maxTokens: 128, overlap: 32 };

describe("chunkText", () => {
  const { text, sentences } = prose(400);
  const chunks = chunkText(text, settings);

  test("every chunk is within maxTokens and reports its exact count", () => {
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.text.trim()).not.toBe("");
      expect(chunk.tokens).toBe(countTokens(chunk.text));
      expect(chunk.tokens).toBeLessThanOrEqual(settings.maxTokens);
    }
    // Packed, not one sentence per chunk.
    const mean = chunks.reduce((sum, chunk) => sum + chunk.tokens, 0) / chunks.length;
    expect(mean).toBeGreaterThan(settings.maxTokens * 0.6);
  });

  test("every sentence is in some chunk, in order", () => {
    let from = 0;
    for (const sentence of sentences) {
      const at = chunks.findIndex((chunk, index) => index >= from && chunk.text.includes(sentence));
      expect(at).toBeGreaterThanOrEqual(0);
      from = at;
    }
  });

  test("each chunk starts with the previous chunk's last whole sentences (about `overlap` tokens)", () => {
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!.text;
      const inPrevious = new Set(previous.match(/Sentence \d+ /g));
      // The leading sentences of this chunk that the previous one has too: the overlap.
      let overlapText = "";
      for (const match of chunks[i]!.text.matchAll(/Sentence \d+ [^.]*\./g)) {
        if (!inPrevious.has(match[0].match(/Sentence \d+ /)![0])) break;
        overlapText = chunks[i]!.text.slice(0, match.index + match[0].length);
      }
      expect(overlapText).not.toBe("");
      expect(previous.endsWith(overlapText)).toBe(true);
      expect(countTokens(overlapText)).toBeLessThanOrEqual(settings.overlap);
    }
  });

  test("no overlap when overlap is 0: chunks partition the sentences", () => {
    const plain = chunkText(text, { maxTokens: 128, overlap: 0 });
    const found = plain.flatMap((chunk) => chunk.text.match(/Sentence \d+ /g) ?? []);
    expect(found).toHaveLength(sentences.length);
  });

  test("deterministic", () => {
    expect(chunkText(text, settings)).toEqual(chunks);
  });
});

describe("edges", () => {
  test("blank text gives no chunk; whitespace is normalised", () => {
    expect(chunkText("  \n\n\t \r\n ", settings)).toEqual([]);
    const [chunk] = chunkText(
      "  Hello   \t world.\r\n\r\n\r\n\r\nSecond\u00a0  paragraph.  \nA new line. ",
      settings,
    );
    expect(chunk!.text).toBe("Hello world.\n\nSecond paragraph.\nA new line.");
  });

  test("one over-long sentence is cut by words, every piece within the limit, with overlap", () => {
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`);
    const chunks = chunkText(words.join(" "), { maxTokens: 64, overlap: 16 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(64);
    const seen = new Set(chunks.flatMap((chunk) => chunk.text.split(" ")));
    for (const word of words) expect(seen.has(word)).toBe(true);
    for (let i = 1; i < chunks.length; i++) {
      const firstWord = chunks[i]!.text.split(" ")[0]!;
      expect(chunks[i - 1]!.text.split(" ")).toContain(firstWord);
    }
  });

  test("a word longer than a chunk (a base64 blob) is cut, and its pieces join without spaces", () => {
    const blob = Array.from(
      { length: 3000 },
      (_, i) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789+/"[(i * 31) % 44],
    ).join("");
    const chunks = chunkText(`Before. ${blob} After.`, { maxTokens: 64, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(64);
    // Cut points fall between pieces of the word, so the chunks put together are the text again.
    expect(chunks.map((chunk) => chunk.text).join("")).toBe(`Before. ${blob} After.`);
    for (const chunk of chunkText(`Before. ${blob} After.`, { maxTokens: 64, overlap: 8 }))
      expect(chunk.tokens).toBeLessThanOrEqual(64);
  });

  test("a long run of emoji is cut between characters, never inside one", () => {
    const emoji = "😀🎉👍🏽".repeat(700);
    const chunks = chunkText(emoji, { maxTokens: 64, overlap: 0 });
    for (const chunk of chunks) {
      expect(chunk.tokens).toBeLessThanOrEqual(64);
      expect(chunk.text).not.toContain("\uFFFD");
    }
    expect(chunks.map((chunk) => chunk.text).join("")).toBe(emoji);
  });

  test("CJK text without spaces", () => {
    const text = "知识库用于检索增强生成。".repeat(200);
    const chunks = chunkText(text, { maxTokens: 64, overlap: 16 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(64);
  });

  test("pathological 1 MB inputs (one sentence, one word) stay fast", () => {
    const sentence = Array.from({ length: 150_000 }, (_, i) => `w${(i * 7919) % 10007}`).join(" ");
    const word = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpxyz".repeat(27_000);
    for (const [name, text] of [
      ["one sentence", sentence],
      ["one word", word],
    ] as const) {
      const started = performance.now();
      const chunks = chunkText(text, { maxTokens: 512, overlap: 64 });
      console.log(
        `${name} of ${(text.length / 1e6).toFixed(1)} MB → ${chunks.length} chunks in ${(performance.now() - started).toFixed(0)} ms`,
      );
      expect(chunks.every((chunk) => chunk.tokens <= 512)).toBe(true);
    }
  });

  test("a 1 MB text chunks quickly", () => {
    const { text } = prose(20_000);
    expect(text.length).toBeGreaterThan(1_000_000);
    const started = performance.now();
    const chunks = chunkText(text.slice(0, 1_000_000), { maxTokens: 512, overlap: 64 });
    const elapsed = performance.now() - started;
    console.log(`1 MB → ${chunks.length} chunks in ${elapsed.toFixed(0)} ms`);
    expect(chunks.every((chunk) => chunk.tokens <= 512)).toBe(true);
  });
});
