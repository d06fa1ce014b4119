import type { InputDeclaration } from "@promptrun/contract";
import { invalid } from "../errors.ts";

/**
 * Every `{{…}}` of a tool template (no braces inside). Unlike a message template, where text
 * such as `{{a.b}}` stays literal, a tool template's placeholders must each be one of the forms
 * below: a request built from a misspelt placeholder is worse than a refused push.
 */
const ANY_PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const PLACEHOLDER_FORM = /^\s*(?:(env|args)\.)?([A-Za-z_][A-Za-z0-9_]*)\s*$/;

/** What a tool template may name: the prompt's inputs, and for an http tool its arguments. */
export interface ToolTemplateScope {
  declarations: Record<string, InputDeclaration>;
  /** Top-level properties of the tool's parameters; null where `args.NAME` is not available (mcp). */
  args: string[] | null;
  tool: string;
}

/**
 * Push-time check of one tool template (docs/PRODUCT-RULES.md "Tools in prompt files"): each
 * placeholder is a declared input, `env.NAME`, or (http tools) `args.NAME` of a top-level
 * parameter. Throws `invalid` naming `path`.
 */
export function checkToolTemplate(template: string, path: string, scope: ToolTemplateScope): void {
  const undeclared: string[] = [];
  for (const match of template.matchAll(ANY_PLACEHOLDER)) {
    const form = PLACEHOLDER_FORM.exec(match[1]!);
    if (!form)
      throw invalid(
        `${path}: '${match[0]}' is not a placeholder (use {{input}}, {{env.NAME}}${scope.args ? " or {{args.NAME}}" : ""})`,
      );
    const prefix = form[1];
    const name = form[2]!;
    if (prefix === "env") continue;
    if (prefix === "args") {
      if (scope.args === null) throw invalid(`${path}: {{args.${name}}}: only http tools can use args`);
      if (!scope.args.includes(name))
        throw invalid(
          `${path}: {{args.${name}}}: '${name}' is not a top-level parameter of tool '${scope.tool}'${
            scope.args.length > 0 ? ` (parameters: ${scope.args.join(", ")})` : " (it has none)"
          }`,
        );
      continue;
    }
    if (!Object.hasOwn(scope.declarations, name) && !undeclared.includes(name)) undeclared.push(name);
  }
  if (undeclared.length > 0)
    throw invalid(
      `${path}: template names undeclared input${undeclared.length > 1 ? "s" : ""}: ${undeclared.join(", ")}`,
    );
}

/**
 * A URL template must start with a literal `http://` or `https://` and, with its placeholders
 * filled, parse as a URL: the scheme is never left to an input, an env var or the model.
 */
export function checkUrlTemplate(template: string, path: string): void {
  if (!/^https?:\/\//i.test(template))
    throw invalid(`${path}: must start with http:// or https:// (a placeholder cannot supply the scheme)`);
  const sample = template.replace(ANY_PLACEHOLDER, "x");
  if (!URL.canParse(sample)) throw invalid(`${path}: is not a URL (with its placeholders filled)`);
}
