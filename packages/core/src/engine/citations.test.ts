import { describe, expect, test } from "bun:test";
import type { RunRetrieval } from "@promptrun/contract";
import { citationsOf, citedNumbers } from "./citations.ts";
import { NO_RESULTS, numberedChunks } from "./retrieval.ts";

const id = (n: number) => `0190f5c2-0000-7000-8000-00000000000${n}`;
const retrieval: RunRetrieval[] = [
  {
    knowledgeBase: "docs",
    query: "refunds",
    chunks: [
      { n: 1, chunkId: id(1), documentId: id(7), filename: "a.md", score: 1 },
      { n: 2, chunkId: id(2), documentId: id(8), filename: "b.md", score: 0.5 },
    ],
  },
  {
    knowledgeBase: "faq",
    query: "cards",
    chunks: [{ n: 3, chunkId: id(3), documentId: id(9), filename: "c.md", score: 0.2 }],
  },
];
const texts: Record<string, string> = { [id(1)]: "🙂".repeat(300), [id(2)]: "short", [id(3)]: "third" };

describe("citations", () => {
  test("[n], [n, m], [n][m] and spaces inside are markers; each number once, in order of first mention", () => {
    expect(citedNumbers("A [2]. B [1, 3]. C [3][1]. D [ 4 ,5 ]. E [2024]")).toEqual([2, 1, 3, 4, 5, 2024]);
    expect(citedNumbers("no markers [a] [1.5] [] [1,] here")).toEqual([]);
  });

  test("one citation per distinct marker naming a retrieved chunk, across every retrieval; others ignored", () => {
    const cited = citationsOf(
      "See [3] and [1, 2], not [4] or [2024]; again [1][3].",
      retrieval,
      (c) => texts[c],
    );
    expect(cited.map((citation) => [citation.n, citation.filename, citation.documentId])).toEqual([
      [3, "c.md", id(9)],
      [1, "a.md", id(7)],
      [2, "b.md", id(8)],
    ]);
    // The quote: the chunk's first 200 characters (code points, no half emoji).
    expect(cited[1]!.quote).toBe("🙂".repeat(200));
    expect(cited[2]!.quote).toBe("short");
  });

  test("a chunk whose text is gone is still cited, with an empty quote; no retrieval, no citation", () => {
    expect(citationsOf("[2]", retrieval, () => undefined)).toEqual([
      { n: 2, chunkId: id(2), documentId: id(8), filename: "b.md", quote: "" },
    ]);
    expect(citationsOf("[1]", [], () => "x")).toEqual([]);
  });

  test("{{retrieval}} text: [n] <filename>: <text>, blank lines between; none found says so", () => {
    expect(
      numberedChunks([
        { n: 1, filename: "a.md", text: "one" },
        { n: 2, filename: "b.md", text: "two\nlines" },
      ]),
    ).toBe("[1] a.md: one\n\n[2] b.md: two\nlines");
    expect(numberedChunks([])).toBe(NO_RESULTS);
  });
});
