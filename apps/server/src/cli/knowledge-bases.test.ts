import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "./command.ts";
import { createBodyOf, mediaTypeOfPath, searchBodyOf, uploadsOf } from "./knowledge-bases.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "promptrun-kb-cli-"));
  writeFileSync(join(dir, "guide.md"), "# Guide\nrefunds take five days");
  writeFileSync(join(dir, "report.PDF"), "%PDF-1.7");
  writeFileSync(join(dir, "data.bin"), new Uint8Array([1, 2, 3]));
  writeFileSync(join(dir, "big.txt"), "x".repeat(2048));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { json: false, inactive: false };

describe("kb CLI arguments", () => {
  test("create: slug, embedding model, chunking; --overlap alone is a usage error", () => {
    expect(createBodyOf("docs", base)).toEqual({ slug: "docs" });
    expect(
      createBodyOf("docs", { ...base, "embedding-model": "dev:hash", "max-tokens": "256", overlap: "32" }),
    ).toEqual({ slug: "docs", embeddingModel: "dev:hash", chunking: { maxTokens: 256, overlap: 32 } });
    expect(() => createBodyOf("docs", { ...base, overlap: "32" })).toThrow(UsageError);
    expect(() => createBodyOf("docs", { ...base, "max-tokens": "lots" })).toThrow("--max-tokens");
  });

  test("add: each file read from disk with its name, media type by extension, metadata, externalId", async () => {
    const uploads = await uploadsOf(
      [join(dir, "guide.md"), join(dir, "report.PDF"), join(dir, "data.bin")],
      { ...base, metadata: '{"team":"support"}' },
      1024,
    );
    expect(uploads.map((upload) => [upload.filename, upload.mediaType])).toEqual([
      ["guide.md", "text/markdown"],
      ["report.PDF", "application/pdf"],
      ["data.bin", undefined],
    ]);
    expect(new TextDecoder().decode(uploads[0]?.content)).toBe("# Guide\nrefunds take five days");
    expect(uploads.every((upload) => (upload.metadata as { team: string }).team === "support")).toBe(true);
    const [one] = await uploadsOf([join(dir, "guide.md")], { ...base, "external-id": "g-1" }, 1024);
    expect(one?.externalId).toBe("g-1");
  });

  test("add: usage errors for no files, a missing file, a file over the limit, bad metadata, externalId with many files", async () => {
    await expect(uploadsOf([], base, 1024)).rejects.toThrow("<files…>");
    await expect(uploadsOf([join(dir, "nope.txt")], base, 1024)).rejects.toThrow("no such file");
    await expect(uploadsOf([join(dir, "big.txt")], base, 1024)).rejects.toThrow("PROMPTRUN_MAX_UPLOAD_BYTES");
    await expect(uploadsOf([join(dir, "guide.md")], { ...base, metadata: "{" }, 1024)).rejects.toThrow(
      "--metadata",
    );
    await expect(
      uploadsOf([join(dir, "guide.md"), join(dir, "data.bin")], { ...base, "external-id": "x" }, 1024),
    ).rejects.toThrow("--external-id");
  });

  test("search: query, --top-k, --mode; media types by extension", () => {
    expect(searchBodyOf("refund", { ...base, "top-k": "3", mode: "keyword" })).toEqual({
      query: "refund",
      topK: 3,
      mode: "keyword",
    });
    expect(searchBodyOf("refund", base)).toEqual({ query: "refund" });
    expect(mediaTypeOfPath("a.docx")).toBe(
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    expect(mediaTypeOfPath("a.HTM")).toBe("text/html");
  });
});
