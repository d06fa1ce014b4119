import type { ChatMessage } from "@promptrun/contract";
import { MessagePart } from "./thread-message.tsx";

/** One message as a model received it: its role, a note on where it came from, its text or its parts. */
export function ChatMessageView({ message, note }: { message: ChatMessage; note?: string | undefined }) {
  return (
    <li className={`message message-${message.role}`}>
      <div className="message-head">
        <span className="message-role">{message.role}</span>
        {note ? <span className="message-note">{note}</span> : null}
      </div>
      {typeof message.content === "string" ? (
        <p className="message-text">{message.content}</p>
      ) : (
        message.content.map((part, index) => <MessagePart key={index} part={part} />)
      )}
    </li>
  );
}
