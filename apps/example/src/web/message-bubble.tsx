import type { ChatMessage } from "@promptrun/react";
import { formatCost, formatTokens } from "./format.ts";
import { ToolCallChip } from "./tool-call-chip.tsx";

/** One chat message; answers stream in (with the tools they call), then show their usage and cost, or their error. */
export function MessageBubble({ message }: { message: ChatMessage }) {
  if (message.role === "user") {
    return (
      <div className="row row-user">
        <div className="bubble bubble-user" data-role="user">
          {message.content}
        </div>
      </div>
    );
  }
  const { status, content, tokenUsage, cost, error, parts } = message;
  return (
    <div className="row row-assistant">
      <div className="avatar" aria-hidden="true">
        P
      </div>
      <div className="answer">
        {parts.map((part) =>
          part.type === "tool-call" ? <ToolCallChip key={part.toolCallId} part={part} /> : null,
        )}
        <div
          className={`bubble bubble-assistant ${status === "failed" ? "bubble-failed" : ""}`}
          data-role="assistant"
          data-status={status}
        >
          {(status === "pending" || status === "requires_action") && content === "" ? (
            <span className="typing" role="status" aria-label="Waiting for the answer">
              <span />
              <span />
              <span />
            </span>
          ) : status === "failed" && content === "" ? (
            <span className="failed-note">No answer this time.</span>
          ) : (
            <span data-testid="answer-text">{content}</span>
          )}
          {status === "streaming" && <span className="caret" aria-hidden="true" />}
        </div>
        {status === "completed" && tokenUsage && cost && (
          <div className="meta" data-testid="answer-meta">
            <span>{formatTokens(tokenUsage.input)} in</span>
            <span className="meta-dot">·</span>
            <span>{formatTokens(tokenUsage.output)} out</span>
            <span className="meta-dot">·</span>
            <span className="meta-cost">
              {cost.success.priced === false ? "price unknown" : formatCost(cost.total)}
            </span>
          </div>
        )}
        {status === "failed" && (
          <div className="meta meta-error" data-testid="answer-error">
            {error ?? "The run failed."}
            {cost && cost.total > 0 ? ` · ${formatCost(cost.total)}` : ""}
          </div>
        )}
      </div>
    </div>
  );
}
