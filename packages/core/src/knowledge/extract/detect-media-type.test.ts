import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PromptrunError } from "../../errors.ts";
import { ACCEPTED_EXTENSIONS, DOCX_MEDIA_TYPE, detectMediaType } from "./detect-media-type.ts";

const FIXTURES = join(import.meta.dir, "../../../../../tests/fixtures/knowledge");
const head = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name))).subarray(0, 8192);
const text = (value: string) => new TextEncoder().encode(value);

const refusal = (run: () => unknown): PromptrunError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PromptrunError);
    expect((error as PromptrunError).code).toBe("unsupported_media_type");
    return error as PromptrunError;
  }
  throw new Error("expected a 415");
};

describe("by extension", () => {
  test.each([
    ["handbook.pdf", "handbook.pdf", "application/pdf"],
    ["policies.docx", "policies.docx", DOCX_MEDIA_TYPE],
    ["notes.md", "notes.md", "text/markdown"],
    ["notes.md", "NOTES.MARKDOWN", "text/markdown"],
    ["page.html", "page.htm", "text/html"],
    ["notes.md", "readme.txt", "text/plain"],
  ] as const)("%s named %s is %s", (fixture, filename, mediaType) => {
    expect(detectMediaType({ filename, head: head(fixture) })).toEqual({ mediaType });
  });

  test("application/octet-stream means: go by the extension", () => {
    expect(
      detectMediaType({
        filename: "a.pdf",
        declared: "application/octet-stream",
        head: head("handbook.pdf"),
      }),
    ).toEqual({
      mediaType: "application/pdf",
    });
  });

  test("an unknown extension lists what is accepted", () => {
    const error = refusal(() => detectMediaType({ filename: "sheet.xlsx", head: text("x") }));
    expect(error.message).toContain("extension '.xlsx'");
    expect(error.message).toContain("application/pdf (.pdf)");
    expect(error.message).toContain("(.docx)");
    refusal(() => detectMediaType({ filename: "README", head: text("x") }));
  });

  test("the fallback applies only when neither a declared type nor the extension tells", () => {
    expect(detectMediaType({ filename: "notes", head: text("hi"), fallback: "text/plain" }).mediaType).toBe(
      "text/plain",
    );
    expect(
      detectMediaType({ filename: "notes.md", head: text("hi"), fallback: "text/plain" }).mediaType,
    ).toBe("text/markdown");
    expect(
      detectMediaType({ filename: "notes.xyz", head: text("hi"), fallback: "text/plain" }).mediaType,
    ).toBe("text/plain");
  });

  test("the accepted extensions", () => {
    expect(Object.keys(ACCEPTED_EXTENSIONS).sort()).toEqual([
      ".docx",
      ".htm",
      ".html",
      ".markdown",
      ".md",
      ".pdf",
      ".txt",
    ]);
  });
});

describe("by declared type", () => {
  test("parameters are ignored and aliases taken", () => {
    expect(
      detectMediaType({ filename: "x", declared: "text/plain; charset=utf-8", head: text("hi") }).mediaType,
    ).toBe("text/plain");
    expect(
      detectMediaType({ filename: "x", declared: "Text/X-Markdown", head: text("# hi") }).mediaType,
    ).toBe("text/markdown");
  });

  test("the declared type wins over the extension", () => {
    expect(
      detectMediaType({ filename: "notes.txt", declared: "text/markdown", head: text("# hi") }).mediaType,
    ).toBe("text/markdown");
  });

  test("an unaccepted declared type is refused", () => {
    const error = refusal(() =>
      detectMediaType({ filename: "a.png", declared: "image/png", head: text("x") }),
    );
    expect(error.message).toStartWith("unsupported media type 'image/png'");
  });
});

describe("the bytes must agree", () => {
  test("text named .pdf", () => {
    const error = refusal(() => detectMediaType({ filename: "lying.pdf", head: head("lying.pdf") }));
    expect(error.message).toStartWith("the file's content is not a PDF (its name says .pdf)");
  });

  test("a PDF named .docx, a PDF declared as text, a zip named .txt", () => {
    const docx = refusal(() => detectMediaType({ filename: "x.docx", head: head("handbook.pdf") }));
    expect(docx.message).toStartWith("the file's content is not a DOCX (zip) file (its name says .docx)");
    const declared = refusal(() =>
      detectMediaType({ filename: "x.pdf", declared: "text/plain", head: head("handbook.pdf") }),
    );
    expect(declared.message).toStartWith("the file's content is not text (declared text/plain)");
    refusal(() => detectMediaType({ filename: "x.txt", head: head("policies.docx") }));
    refusal(() => detectMediaType({ filename: "x.html", head: head("bomb.docx") }));
  });

  test("NUL bytes in the first 8 KB are not text; later ones are not looked at", () => {
    const binary = new Uint8Array(100).fill(0x41);
    binary[50] = 0;
    refusal(() => detectMediaType({ filename: "x.md", head: binary }));
    const late = new Uint8Array(9000).fill(0x41);
    late[8500] = 0;
    expect(detectMediaType({ filename: "x.md", head: late }).mediaType).toBe("text/markdown");
  });

  test("an empty file is no PDF, and is (empty) text", () => {
    refusal(() => detectMediaType({ filename: "x.pdf", head: new Uint8Array() }));
    expect(detectMediaType({ filename: "x.txt", head: new Uint8Array() }).mediaType).toBe("text/plain");
  });
});
