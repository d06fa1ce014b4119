import { isUuid } from "@promptrun/contract";
import type { VersionSelector } from "../ports.ts";

/** docs/PRODUCT-RULES.md "Prompts and versions": UUID → version id; `^[1-9][0-9]*$` → version number; `latest`; anything else → tag (case-sensitive). */
export function parseVersionSegment(segment: string): VersionSelector {
  if (isUuid(segment)) return { kind: "id", id: segment.toLowerCase() };
  if (/^[1-9][0-9]*$/.test(segment)) return { kind: "number", version: Number(segment) };
  if (segment === "latest") return { kind: "latest" };
  return { kind: "tag", tag: segment };
}

/** "prompt 'greet' has no version 3", "… has no tag 'beta'", "… has no version with id '…'" */
export function describeMissingVersion(slug: string, selector: VersionSelector): string {
  switch (selector.kind) {
    case "id":
      return `prompt '${slug}' has no version with id '${selector.id}'`;
    case "number":
      return `prompt '${slug}' has no version ${selector.version}`;
    case "latest":
      return `prompt '${slug}' has no versions`;
    case "tag":
      return `prompt '${slug}' has no version or tag '${selector.tag}'`;
  }
}
