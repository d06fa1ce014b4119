import { describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import type { ResolveHost } from "../security/url-guard.ts";
import { checkMediaInput, checkMediaInputs, MEDIA_INPUT_RULE, mediaInputProblem } from "./media-input.ts";

/** A real 1×1 PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const base64 = (text: string) => Buffer.from(text).toString("base64");
const PDF_BASE64 = base64("%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n");

const rejectionOf = async (check: Promise<unknown>): Promise<string> => {
  try {
    await check;
    return "accepted";
  } catch (error) {
    return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : `other: ${error}`;
  }
};

describe("mediaInputProblem (shape, no I/O)", () => {
  test.each([
    "file:///etc/passwd",
    "javascript:alert(1)",
    "http://example.com/x.png",
    "ftp://example.com/x.png",
    "/relative/x.png",
    "x.png",
    "https://",
    "",
    "data:image/png,rawbytes",
    "data:image/png;charset=x,abc",
  ])("%p is refused with the rule", (value) => {
    expect(mediaInputProblem(value, "file")).toBe(MEDIA_INPUT_RULE);
  });

  test("https URLs and base64 data URLs pass", () => {
    expect(mediaInputProblem("https://cdn.example.com/a/b.png?x=1", "image")).toBeNull();
    expect(mediaInputProblem(`data:image/png;base64,${PNG_BASE64}`, "image")).toBeNull();
    expect(mediaInputProblem(`DATA:Image/PNG;name=a.png;base64,${PNG_BASE64}`, "image")).toBeNull();
    expect(mediaInputProblem(`data:application/pdf;base64,${PDF_BASE64}`, "file")).toBeNull();
  });

  test("bad data URLs say what is wrong", () => {
    expect(mediaInputProblem("data:image/png;base64,not base64!", "image")).toBe(
      "is a data: URL whose payload is not valid base64",
    );
    expect(mediaInputProblem("data:image/png;base64,abc", "image")).toBe(
      "is a data: URL whose payload is not valid base64",
    );
    expect(mediaInputProblem("data:image/png;base64,", "image")).toBe(
      "is a data: URL whose payload is not valid base64",
    );
    expect(mediaInputProblem(`data:;base64,${PNG_BASE64}`, "file")).toBe(
      "is a data: URL without a valid media type (data:<type>/<subtype>;base64,…)",
    );
    expect(mediaInputProblem(`data:application/pdf;base64,${PDF_BASE64}`, "image")).toBe(
      "is an image input, but its data: URL declares application/pdf",
    );
  });

  test("hostile data URLs are refused in one pass (no pattern backtracking over a megabyte)", () => {
    const started = performance.now();
    expect(mediaInputProblem(`data:image/png${";a".repeat(500_000)}`, "image")).toBe(MEDIA_INPUT_RULE);
    expect(mediaInputProblem(`data:image/png;base64,${"A".repeat(1_000_000)}!!!`, "image")).toBe(
      "is a data: URL whose payload is not valid base64",
    );
    expect(mediaInputProblem(`data:image/png;base64,${"A".repeat(1_000_000)}`, "image")).toBeNull();
    expect(mediaInputProblem(`data:${"a".repeat(1_000_000)};base64,AAAA`, "file")).toBe(
      "is a data: URL without a valid media type (data:<type>/<subtype>;base64,…)",
    );
    expect(performance.now() - started).toBeLessThan(250);
  });

  test("credentials in an https URL are refused", () => {
    expect(mediaInputProblem("https://user:pw@example.com/x.png", "image")).toBe(
      "must not carry credentials in its URL",
    );
  });
});

describe("checkMediaInput: bytes agree with the declared type", () => {
  const check = (value: string, type: "image" | "file" = "image") =>
    rejectionOf(checkMediaInput("shot", value, type, { allowPrivateUrls: false }));

  test("a real PNG declared as image/png passes; a PDF declared as application/pdf passes", async () => {
    expect(await check(`data:image/png;base64,${PNG_BASE64}`)).toBe("accepted");
    expect(await check(`data:application/pdf;base64,${PDF_BASE64}`, "file")).toBe("accepted");
  });

  test("image/png whose bytes are a PDF or plain text is refused", async () => {
    expect(await check(`data:image/png;base64,${PDF_BASE64}`)).toBe(
      "invalid: inputs.shot declares image/png, but its bytes are application/pdf",
    );
    expect(await check(`data:image/png;base64,${base64("just some text")}`)).toBe(
      "invalid: inputs.shot declares image/png, but its bytes are not image/png",
    );
    expect(await check(`data:image/jpeg;base64,${PNG_BASE64}`)).toBe(
      "invalid: inputs.shot declares image/jpeg, but its bytes are image/png",
    );
  });

  test("files: a binary format must show its signature; text formats have none", async () => {
    expect(await check(`data:application/pdf;base64,${base64("hello")}`, "file")).toBe(
      "invalid: inputs.shot declares application/pdf, but its bytes are not application/pdf",
    );
    expect(await check(`data:text/plain;base64,${PDF_BASE64}`, "file")).toBe(
      "invalid: inputs.shot declares text/plain, but its bytes are application/pdf",
    );
    expect(await check(`data:text/csv;base64,${base64("a,b\n1,2\n")}`, "file")).toBe("accepted");
    expect(await check(`data:application/json;base64,${base64('{"a":1}')}`, "file")).toBe("accepted");
    expect(await check(`data:text/xml;base64,${base64('<?xml version="1.0"?><a/>')}`, "file")).toBe(
      "accepted",
    );
    expect(await check(`data:image/jpg;base64,${PNG_BASE64}`)).toContain("its bytes are image/png");
  });
});

describe("checkMediaInput: private addresses", () => {
  const resolver =
    (table: Record<string, string[]>): ResolveHost =>
    async (host) => {
      const addresses = table[host];
      if (!addresses) throw new Error(`ENOTFOUND ${host}`);
      return addresses;
    };
  const resolve = resolver({
    localhost: ["127.0.0.1", "::1"],
    "images.example.com": ["93.184.215.14"],
    "inside.example.com": ["10.1.2.3"],
    "mixed.example.com": ["93.184.215.14", "192.168.1.1"],
  });
  const check = (url: string, allowPrivateUrls = false) =>
    rejectionOf(checkMediaInput("photo", url, "image", { allowPrivateUrls, resolve }));
  const refused =
    "invalid: inputs.photo must resolve to a public address (private or loopback addresses and hosts that do not resolve are refused)";

  test.each([
    "https://127.0.0.1/x.png",
    "https://localhost/x.png",
    "https://10.0.0.1/x.png",
    "https://[::1]/x.png",
    "https://169.254.169.254/latest/meta-data",
    "https://2130706433/x.png",
    "https://0x7f.1/x.png",
    "https://[::ffff:127.0.0.1]/x.png",
    "https://inside.example.com/x.png",
    "https://mixed.example.com/x.png",
    "https://does-not-resolve.example/x.png",
  ])("%p is refused, naming the input", async (url) => {
    expect(await check(url)).toBe(refused);
  });

  test("a public host passes; private ones pass when private URLs are allowed", async () => {
    expect(await check("https://images.example.com/x.png")).toBe("accepted");
    expect(await check("https://93.184.215.14/x.png")).toBe("accepted");
    expect(await check("https://127.0.0.1/x.png", true)).toBe("accepted");
    expect(await check("https://localhost/x.png", true)).toBe("accepted");
  });

  test("a resolver that never answers is given up on and the host refused like one that does not resolve", async () => {
    const silent: ResolveHost = () => new Promise(() => {});
    const started = performance.now();
    const answer = await rejectionOf(
      checkMediaInput("photo", "https://slow.example.com/x.png", "image", {
        allowPrivateUrls: false,
        resolve: silent,
        dnsTimeoutMs: 50,
      }),
    );
    expect(answer).toBe(refused);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test("checkMediaInputs looks at image and file inputs only, defaults included, own keys only", async () => {
    const declarations = {
      text: { type: "string" as const },
      photo: { type: "image" as const, optional: true },
      doc: { type: "file" as const, default: "https://127.0.0.1/default.pdf" },
    };
    const options = { allowPrivateUrls: false, resolve };
    expect(await rejectionOf(checkMediaInputs(declarations, { text: "https://127.0.0.1/" }, options))).toBe(
      "accepted",
    );
    expect(
      await rejectionOf(checkMediaInputs(declarations, { doc: "https://127.0.0.1/default.pdf" }, options)),
    ).toContain("invalid: inputs.doc must resolve to a public address");
    expect(
      await rejectionOf(
        checkMediaInputs(
          declarations,
          { photo: "https://localhost/x.png", doc: "https://images.example.com/a" },
          options,
        ),
      ),
    ).toContain("invalid: inputs.photo must resolve");
  });
});
