/** A GitHub-flavoured Markdown table; cells are escaped for pipes and newlines. */
export function markdownTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cell = (value: string | number) => String(value).replaceAll("|", "\\|").replaceAll("\n", " ");
  const line = (cells: Array<string | number>) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(headers), line(headers.map(() => "---")), ...rows.map(line)].join("\n");
}
