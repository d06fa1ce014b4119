import type { MemoryPart, ThreadMemoryMessage } from "@promptrun/contract";
import { Link } from "wouter";
import { formatDateTime, shortId } from "./figures.ts";
import { JsonView } from "./json-view.tsx";

/** An image or file reference, never fetched: a data URL by its size, a URL by its text. */
const describeSource = (source: string): string =>
  source.startsWith("data:")
    ? `data URL, ${Math.ceil(source.length / 1024)} KB`
    : source.length > 120
      ? `${source.slice(0, 117)}…`
      : source;

/** One part of a message: text, an image or file reference, a tool call or its result. */
export function MessagePart({ part }: { part: MemoryPart }) {
  switch (part.type) {
    case "text":
      return <p className="message-text">{part.text}</p>;
    case "image":
      return (
        <p className="message-part">
          <span className="part-kind">image</span> {part.mediaType ?? ""} {describeSource(part.image)}
        </p>
      );
    case "file":
      return (
        <p className="message-part">
          <span className="part-kind">file</span> {part.filename ?? ""} {part.mediaType ?? ""}{" "}
          {describeSource(part.file)}
        </p>
      );
    case "tool-call":
      return (
        <div className="message-part tool-call">
          <p>
            <span className="part-kind">tool call</span> <code>{part.name}</code>{" "}
            <span className="muted">{part.toolCallId}</span>
          </p>
          <JsonView value={part.arguments} />
        </div>
      );
    case "tool-result":
      return (
        <div className={`message-part tool-result${part.isError ? " is-error" : ""}`}>
          <p>
            <span className="part-kind">{part.isError ? "tool error" : "tool result"}</span>{" "}
            <code>{part.name}</code> <span className="muted">{part.toolCallId}</span>
          </p>
          <JsonView value={part.output} />
        </div>
      );
  }
}

/** One message of a thread's memory: its role, its run, its text or its parts (tool calls and results). */
export function ThreadMessageView({ message }: { message: ThreadMemoryMessage }) {
  return (
    <li className={`message message-${message.role}`}>
      <div className="message-head">
        <span className="message-role">{message.role}</span>
        <time dateTime={message.createdAt}>{formatDateTime(message.createdAt)}</time>
        {message.runId ? (
          <Link href={`/runs/${message.runId}`}>run {shortId(message.runId)}</Link>
        ) : (
          <span className="muted">imported{message.externalId ? ` (${message.externalId})` : ""}</span>
        )}
      </div>
      {message.parts?.length ? (
        message.parts.map((part, index) => <MessagePart key={index} part={part} />)
      ) : (
        <p className="message-text">{message.content}</p>
      )}
    </li>
  );
}
