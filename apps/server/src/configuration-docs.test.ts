import { describe, expect, test } from "bun:test";
import { renderEnvExample, undocumentedVariables, withReadmeTable } from "./configuration-docs.ts";

const root = `${import.meta.dir}/../../..`;

describe("configuration docs (generated from env.ts by `bun run config-docs`)", () => {
  test("every variable env.ts reads is documented exactly once", () => {
    expect(undocumentedVariables()).toEqual([]);
  });

  test("the README's configuration table matches env.ts", async () => {
    const readme = await Bun.file(`${root}/README.md`).text();
    expect(readme).toBe(withReadmeTable(readme));
  });

  test(".env.example matches env.ts", async () => {
    expect(await Bun.file(`${root}/.env.example`).text()).toBe(renderEnvExample());
  });
});
