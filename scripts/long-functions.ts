#!/usr/bin/env bun
/**
 * Lists functions longer than MAX_LINES in runtime code (packages/*\/src, apps/*\/src; tests
 * excluded) that carry no reason comment. A function's length is its own lines: the lines of
 * functions nested in it count for those, so a factory of small closures is not long for them. A function that should stay long says why in a
 * comment just above it (or above the statement that holds it):
 *   // long-function: <why splitting it would not help>
 * Usage: `bun scripts/long-functions.ts` — prints `file:line name (N lines)`, exits 1 if any.
 */
import { Glob } from "bun";
import ts from "typescript";

const MAX_LINES = 60;
const REASON = /long-function:\s*\S/;
const TEST_FILE = /\.(test|spec)\.tsx?$|\/testing\/|\/conformance\/|test-fixture\.ts$/;

const root = new URL("..", import.meta.url).pathname;

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(source).slice(0, 40)})`;
  return "(anonymous)";
}

/** The function node and the statements that hold it: a reason comment may stand above any of them. */
function hasReason(node: ts.Node, source: ts.SourceFile): boolean {
  const text = source.getFullText();
  for (let at: ts.Node | undefined = node; at && !ts.isSourceFile(at) && !ts.isBlock(at); at = at.parent) {
    const comments = ts.getLeadingCommentRanges(text, at.getFullStart()) ?? [];
    if (comments.some((range) => REASON.test(text.slice(range.pos, range.end)))) return true;
  }
  return false;
}

const isFunctionWithBody = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionLike(node) && "body" in node && node.body !== undefined;

const lineSpan = (node: ts.Node, source: ts.SourceFile) => {
  const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
  return { start, lines: end - start + 1 };
};

/** Lines of the outermost functions nested in `node` (not counted as its own). */
function nestedLines(node: ts.Node, source: ts.SourceFile): number {
  let lines = 0;
  const visit = (child: ts.Node) => {
    if (isFunctionWithBody(child)) lines += lineSpan(child, source).lines;
    else ts.forEachChild(child, visit);
  };
  ts.forEachChild(node, visit);
  return lines;
}

function offendersIn(path: string, content: string): string[] {
  const source = ts.createSourceFile(path, content, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (isFunctionWithBody(node)) {
      const { start, lines: span } = lineSpan(node, source);
      const lines = span - nestedLines(node, source);
      if (lines > MAX_LINES && !hasReason(node, source))
        found.push(`${path}:${start + 1} ${nameOf(node, source)} (${lines} own lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const offenders: string[] = [];
for (const pattern of ["packages/*/src/**/*.{ts,tsx}", "apps/*/src/**/*.{ts,tsx}"]) {
  for await (const path of new Glob(pattern).scan({ cwd: root })) {
    if (TEST_FILE.test(path)) continue;
    offenders.push(...offendersIn(path, await Bun.file(`${root}${path}`).text()));
  }
}
offenders.sort();
for (const offender of offenders) console.log(offender);
if (offenders.length > 0) {
  console.error(
    `\n${offenders.length} function(s) over ${MAX_LINES} lines without a "long-function:" reason`,
  );
  process.exit(1);
}
