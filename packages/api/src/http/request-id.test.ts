import { expect, test } from "bun:test";
import { isUuid } from "@promptrun/contract";
import { requestIdFor } from "./request-id.ts";

const withId = (id: string) => new Request("http://x/", { headers: { "x-request-id": id } });

test("echoes a sane incoming id", () => {
  expect(requestIdFor(withId("abc-123_x.y:z"))).toBe("abc-123_x.y:z");
});

test("replaces missing, long or unsafe ids with a fresh UUID", () => {
  expect(isUuid(requestIdFor(new Request("http://x/")))).toBe(true);
  for (const bad of ["a".repeat(129), "has space", "new\\nline", "<script>"]) {
    const id = requestIdFor(withId(bad));
    expect(id).not.toBe(bad);
    expect(isUuid(id)).toBe(true);
  }
});
