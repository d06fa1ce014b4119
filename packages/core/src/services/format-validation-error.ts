import type { z } from "zod";

type Issue = z.core.$ZodIssue;
type Path = ReadonlyArray<PropertyKey>;

/** `messages[0].role`, `envVars.A`, `metadata.tags[1]` */
export const formatPath = (path: Path): string =>
  path.reduce<string>((text, segment) => {
    if (typeof segment === "number") return `${text}[${segment}]`;
    const name = String(segment);
    return text ? `${text}.${name}` : name;
  }, "");

const withoutZodPrefix = (message: string): string => message.replace(/^Invalid (input|option): /, "");

/** For a union, the branch that got furthest (the longest issue path) explains best what is wrong. */
const furthestBranchIssue = (issue: Extract<Issue, { code: "invalid_union" }>): Issue | undefined => {
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  return best;
};

const discriminatorMessage = (issue: Extract<Issue, { code: "invalid_union" }>): string => {
  const options = (issue as { options?: unknown }).options;
  return Array.isArray(options)
    ? `expected one of ${options.map((option) => JSON.stringify(option)).join("|")}`
    : issue.message;
};

function describeIssue(issue: Issue, basePath: Path, subject: string): string {
  const path = [...basePath, ...issue.path];
  const where = formatPath(path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const names = issue.keys.map((key) => `'${formatPath([...path, key])}'`);
      return `unknown field${names.length > 1 ? "s" : ""} ${names.join(", ")}`;
    }
    case "invalid_type":
      if (issue.message.endsWith("received undefined")) return `${where}: required`;
      if (path.length === 0) return `${subject} must be a JSON object`;
      return `${where}: ${withoutZodPrefix(issue.message)}`;
    case "invalid_union": {
      // A discriminated union whose discriminator matched no option: `…content[0].type: expected one of …`.
      if (issue.errors.length === 0) return `${where}: ${withoutZodPrefix(discriminatorMessage(issue))}`;
      const branch = furthestBranchIssue(issue);
      if (branch && branch.path.length > 0) return describeIssue(branch, path, subject);
      const expected = issue.errors
        .map((errors) => errors[0])
        .flatMap((first) => (first?.code === "invalid_type" ? [first.expected] : []));
      if (expected.length === issue.errors.length) return `${where}: expected ${expected.join(" or ")}`;
      return `${where}: ${withoutZodPrefix(issue.message)}`;
    }
    case "invalid_key": {
      // A record key that breaks the key's rule: say the rule, not zod's "Invalid key in record".
      const rule = issue.issues[0]?.message;
      return `${where}: ${rule ? withoutZodPrefix(rule) : withoutZodPrefix(issue.message)}`;
    }
    default:
      return where ? `${where}: ${withoutZodPrefix(issue.message)}` : withoutZodPrefix(issue.message);
  }
}

/**
 * Turns zod issues into one message that names each field, e.g.
 * `envVars: envVars key 'lower' must be UPPER_CASE (…)` or `unknown field 'foo'`.
 */
export function formatValidationError(error: z.ZodError, subject = "request body"): string {
  return error.issues.map((issue) => describeIssue(issue, [], subject)).join("; ");
}
