import { describe, expect, test } from "bun:test";
import { createDevHashModel, DEV_HASH_DIMENSIONS, devHashVector, fnv1a } from "./dev-hash.ts";

const cosine = (a: Float32Array, b: Float32Array) =>
  a.reduce((sum, value, index) => sum + value * (b[index] as number), 0);
const norm = (a: Float32Array) => Math.sqrt(cosine(a, a));

describe("dev:hash", () => {
  test("FNV-1a matches the reference values", () => {
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(fnv1a("foobar")).toBe(0xbf9cf968);
  });

  test("256 dimensions, unit length, the same text the same vector", () => {
    const a = devHashVector("The vacation policy grants 27 days of paid leave.");
    expect(a).toBeInstanceOf(Float32Array);
    expect(a).toHaveLength(DEV_HASH_DIMENSIONS);
    expect(norm(a)).toBeCloseTo(1, 5);
    expect(Array.from(devHashVector("The vacation policy grants 27 days of paid leave."))).toEqual(
      Array.from(a),
    );
    // Case, punctuation and spacing do not matter.
    expect(Array.from(devHashVector("the VACATION policy, grants 27 days   of paid leave"))).toEqual(
      Array.from(a),
    );
  });

  test("texts sharing words score higher than unrelated ones", () => {
    const query = devHashVector("how many vacation days do I get");
    const related = devHashVector("The vacation policy grants 27 days of paid leave per year.");
    const unrelated = devHashVector("Expense reports are due on the 5th business day of each month.");
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.1);
    // Word order matters a little (bigrams): the same words in order score higher.
    const ordered = devHashVector("paid leave policy");
    expect(cosine(ordered, devHashVector("paid leave policy"))).toBeGreaterThan(
      cosine(ordered, devHashVector("policy leave paid")),
    );
  });

  test("a text without words is the zero vector (cosine 0)", () => {
    const empty = devHashVector(" ... !!! ");
    expect(norm(empty)).toBe(0);
    expect(cosine(empty, devHashVector("anything"))).toBe(0);
  });

  test("unicode letters and digits are words", () => {
    expect(norm(devHashVector("Größe 東京 ١٢٣"))).toBeCloseTo(1, 5);
    expect(cosine(devHashVector("Größe"), devHashVector("GRÖSSE"))).toBeLessThan(1); // no folding beyond lower case
    expect(cosine(devHashVector("ＡＢＣ"), devHashVector("abc"))).toBeCloseTo(1, 5); // NFKC
  });

  test("the model: tokens are words, cost is zero and priced", async () => {
    const model = createDevHashModel();
    expect(model.ref).toBe("dev:hash");
    const result = await model.embed(["one two three", "four", ""]);
    expect(result.vectors).toHaveLength(3);
    expect(result.tokens).toBe(4);
    expect(result.cost).toEqual({ total: 0, priced: true });
  });
});
