import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { parseAllDocuments } from "yaml";

const PROMPT_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** Reads prompt files (YAML, possibly multi-document, or JSON) from a file or a directory. */
export function readPromptFiles(path: string): unknown[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((name) => PROMPT_EXTENSIONS.has(extname(name)))
        .sort()
        .map((name) => join(path, name))
    : [path];
  const prompts: unknown[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    if (extname(file) === ".json") {
      const parsed: unknown = JSON.parse(text);
      prompts.push(...(Array.isArray(parsed) ? parsed : [parsed]));
      continue;
    }
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]!.message}`);
      const value: unknown = document.toJSON();
      if (value !== null && value !== undefined) prompts.push(value);
    }
  }
  return prompts;
}
