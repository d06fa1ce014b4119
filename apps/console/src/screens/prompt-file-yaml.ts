/**
 * Prompt files as YAML in the browser: a stored version back to its file, and the checks of an
 * edited file with each problem placed at its line — YAML syntax (the `yaml` parser's offsets),
 * the contract's `promptFileSchema` (a zod path mapped to the node it names), and the server's
 * 400 on push (its message names the path: `prompt 'x': tools[0].name: …`).
 */
import { type PromptVersion, promptFileSchema } from "@promptrun/contract";
import { type Document, isMap, isScalar, isSeq, type Node, parseDocument, stringify } from "yaml";

/** A problem of the edited text: character offsets for the editor, the 1-based line for the list. */
export interface FileProblem {
  from: number;
  to: number;
  line: number;
  message: string;
}

type Path = ReadonlyArray<PropertyKey>;

/**
 * The prompt file of a stored version, in the usual order of a hand-written file. Tags are left
 * out: a pushed file's tags move (docs/PRODUCT-RULES.md "Prompts over REST"), and saving an edit
 * must not move `production` by surprise — tags move on the prompt's page, with a confirmation.
 */
export function versionToFile(version: PromptVersion): Record<string, unknown> {
  const file: Record<string, unknown> = { slug: version.slug };
  if (version.description !== null) file.description = version.description;
  file.model = version.model;
  if (Object.keys(version.params).length > 0) file.params = version.params;
  if (Object.keys(version.inputs).length > 0) file.inputs = version.inputs;
  file.messages = version.messages;
  if (version.output !== null) file.output = version.output;
  if (version.memory !== null) file.memory = version.memory;
  if (version.providerOptions !== null) file.providerOptions = version.providerOptions;
  if (version.tools.length > 0) file.tools = version.tools;
  if (version.toolChoice !== null) file.toolChoice = version.toolChoice;
  if (version.maxSteps !== null) file.maxSteps = version.maxSteps;
  if (version.toolTimeoutSeconds !== null) file.toolTimeoutSeconds = version.toolTimeoutSeconds;
  return file;
}

/** The YAML text of a version's file (no line folding: diffs stay line by line). */
export const versionYaml = (version: PromptVersion): string =>
  stringify(versionToFile(version), { lineWidth: 0 });

const lineOf = (text: string, offset: number): number => {
  let line = 1;
  for (let index = 0; index < offset && index < text.length; index += 1) if (text[index] === "\n") line += 1;
  return line;
};

/** A problem from `from` to the end of its line (at most to `end`): one line marked, not a whole block. */
function problemAt(text: string, from: number, end: number, message: string): FileProblem {
  const start = Math.max(0, Math.min(from, text.length));
  const newline = text.indexOf("\n", start);
  const lineEnd = newline === -1 ? text.length : newline;
  const to = Math.max(start, Math.min(end, lineEnd));
  return { from: start, to, line: lineOf(text, start), message };
}

const keyText = (key: unknown): string => (isScalar(key) ? String(key.value) : String(key));

/**
 * The range a path names in the document: the key of the last field found (or the item of a
 * list). A path that goes past what the file has stops at the deepest node that exists.
 */
function rangeOfPath(doc: Document, path: Path): [number, number] {
  const root = doc.contents as Node | null;
  let node: unknown = root;
  let range: [number, number] = root?.range ? [root.range[0], root.range[1]] : [0, 0];
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => keyText(item.key) === String(segment));
      if (!pair) break;
      const key = isScalar(pair.key) ? pair.key.range : undefined;
      const value = isScalar(pair.value) ? pair.value.range : undefined;
      if (key) range = [key[0], value ? value[1] : key[1]];
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      const item = node.items[segment] as Node | undefined;
      if (!item?.range) break;
      range = [item.range[0], item.range[1]];
      node = item;
    } else break;
  }
  return range;
}

type Issue = NonNullable<ReturnType<typeof promptFileSchema.safeParse>["error"]>["issues"][number];

const withoutZodPrefix = (message: string): string => message.replace(/^Invalid (input|option): /, "");

/** What is wrong where; `named`: the message already names the field. */
interface Described {
  path: Path;
  message: string;
  named?: boolean;
}

/** One issue as path + words, the way the server words it (docs/PRODUCT-RULES.md "Prompt files"). */
function describeIssue(issue: Issue, base: Path): Described[] {
  const path = [...base, ...issue.path];
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => ({
        path: [...path, key],
        message: `unknown field '${formatPath([...path, key])}'`,
        named: true,
      }));
    case "invalid_type":
      return [
        {
          path,
          message: issue.message.endsWith("received undefined")
            ? "required"
            : withoutZodPrefix(issue.message),
        },
      ];
    case "invalid_union": {
      // The branch that got furthest explains best; no branch: the discriminator matched none.
      const branches = issue.errors.map((errors) => errors[0]).filter((first) => first !== undefined);
      const furthest = branches.sort((a, b) => b.path.length - a.path.length)[0];
      if (furthest && furthest.path.length > 0) return describeIssue(furthest, path);
      const options = (issue as { options?: unknown }).options;
      const message = Array.isArray(options)
        ? `expected one of ${options.map((option) => JSON.stringify(option)).join("|")}`
        : withoutZodPrefix(issue.message);
      return [{ path, message }];
    }
    case "invalid_key":
      return [{ path, message: withoutZodPrefix(issue.issues[0]?.message ?? issue.message) }];
    default:
      return [{ path, message: withoutZodPrefix(issue.message) }];
  }
}

/** `tools[0].parameters` → `["tools", 0, "parameters"]` */
const parsePath = (text: string): Path =>
  [...text.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] !== undefined ? Number(match[2]) : (match[1] ?? ""),
  );

/** `tools[0].name` → `tools[0].name` (how the server and this list name a field). */
const formatPath = (path: Path): string =>
  path.reduce<string>((text, segment) => {
    if (typeof segment === "number") return `${text}[${segment}]`;
    return text ? `${text}.${String(segment)}` : String(segment);
  }, "");

export interface CheckedFile {
  /** The parsed file (plain JSON) when the YAML parses, else null. */
  file: unknown;
  problems: FileProblem[];
}

/** YAML syntax first (nothing else can be checked before it parses), then the contract's schema. */
export function checkPromptFileText(text: string): CheckedFile {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((error) =>
      problemAt(
        text,
        error.pos[0],
        Math.max(error.pos[1], error.pos[0] + 1),
        error.message.split("\n")[0] ?? error.message,
      ),
    );
    return { file: null, problems };
  }
  const file = doc.toJS() as unknown;
  const result = promptFileSchema.safeParse(file);
  if (result.success) return { file, problems: [] };
  const problems = result.error.issues.flatMap((issue) =>
    describeIssue(issue, []).map(({ path, message, named }) => {
      const [from, to] = rangeOfPath(doc, path);
      const where = formatPath(path);
      const words = named ? message : where ? `${where}: ${message}` : `the prompt file: ${message}`;
      return problemAt(text, from, to, words);
    }),
  );
  return { file, problems };
}

/** The paths a server message names, one per `; `-separated part: `path: …`, `unknown field 'path'`, `default of path …`. */
function pathsOfServerPart(part: string): Path[] {
  const unknown = part.match(/^unknown fields? (.+)$/);
  if (unknown?.[1]) return [...unknown[1].matchAll(/'([^']+)'/g)].map((match) => parsePath(match[1] ?? ""));
  const named = part.match(/^(?:default of )?([A-Za-z_][\w-]*(?:\[\d+\]|\.[\w-]+)*)(?::| must| is )/);
  return named?.[1] ? [parsePath(named[1])] : [];
}

/**
 * The server's 400 on push placed in the text: each part of its message at the line of the path
 * it names, when that path is in the file; parts naming no path found are left to the notice.
 */
export function problemsFromServerMessage(text: string, message: string): FileProblem[] {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) return [];
  const body = message.replace(/^prompt '[^']*': /, "");
  return body.split("; ").flatMap((part) =>
    pathsOfServerPart(part).flatMap((path) => {
      if (path.length === 0 || !doc.hasIn(path.slice(0, 1))) return [];
      const [from, to] = rangeOfPath(doc, path);
      return [problemAt(text, from, to, part)];
    }),
  );
}
