import type { ChatToolCallPart } from "@promptrun/react";

const stateLabel: Record<ChatToolCallPart["state"], string> = {
  running: "calling…",
  "awaiting-output": "answering in this browser…",
  done: "answered",
  error: "failed",
};

const compact = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** A tool call of an answer: its name and arguments, where it stands, and its output once known. */
export function ToolCallChip({ part }: { part: ChatToolCallPart }) {
  return (
    <div className="tool-call" data-testid="tool-call" data-tool={part.name} data-state={part.state}>
      <span className="tool-name">
        {part.name}({compact(part.arguments)})
      </span>
      <span className="tool-state">{stateLabel[part.state]}</span>
      {"output" in part && <code className="tool-output">{compact(part.output)}</code>}
    </div>
  );
}
