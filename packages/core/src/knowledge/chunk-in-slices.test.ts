import { describe, expect, test } from "bun:test";
import { chunkInSlices } from "./chunk-in-slices.ts";
import { chunkText } from "./chunking/chunk-text.ts";

const paragraph = (n: number) =>
  `Paragraph ${n} tells the tale of lighthouse keeper number ${n}, who counted ${n * 7} ships one stormy night.`;
const text = Array.from({ length: 400 }, (_, n) => paragraph(n)).join("\n\n");
const chunking = { maxTokens: 64, overlap: 16 };

describe("chunkInSlices", () => {
  test("a short text is chunked in one go, exactly as the chunker does", async () => {
    const short = text.slice(0, 2000);
    expect(await chunkInSlices(chunkText, short, chunking)).toEqual(chunkText(short, chunking));
  });

  test("a long text: every paragraph lands in some chunk, no chunk over maxTokens, and more chunks than one slice gives", async () => {
    const chunks = await chunkInSlices(chunkText, text, chunking, 4096);
    expect(chunks.every((chunk) => chunk.tokens <= chunking.maxTokens && chunk.text.trim() !== "")).toBe(
      true,
    );
    const joined = chunks.map((chunk) => chunk.text).join("\n");
    for (let n = 0; n < 400; n++) expect(joined).toContain(`lighthouse keeper number ${n},`);
    expect(chunks.length).toBeGreaterThan(chunkText(text.slice(0, 4096), chunking).length * 10);
  });

  test("it yields to the event loop between slices", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await chunkInSlices(chunkText, text, chunking, 2048);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });
});
