import { useChat } from "@promptrun/react";
import { useEffect, useRef } from "react";
import { answerToolCall } from "./client-tools.ts";
import { Composer } from "./composer.tsx";
import { formatCost } from "./format.ts";
import { MessageBubble } from "./message-bubble.tsx";
import { StatusPill } from "./status-pill.tsx";

/**
 * The example chat: one thread, answers streamed live from Promptrun. A run that calls a client
 * tool pauses; `onToolCall` answers it here in the browser and useChat submits the output.
 */
export function ChatApp() {
  const chat = useChat({ channel: "chat", onToolCall: (call) => answerToolCall(call) });
  const bottom = useRef<HTMLDivElement>(null);
  const lastMessage = chat.messages.at(-1);

  // Follow the conversation as answers grow.
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [
    chat.messages.length,
    lastMessage?.content,
    lastMessage?.role === "assistant" && lastMessage.parts.length,
  ]);

  const spent = chat.messages.reduce(
    (sum, message) => (message.role === "assistant" && message.cost ? sum + message.cost.total : sum),
    0,
  );

  return (
    <div className="app">
      <header className="header">
        <div className="brand">
          <div className="logo" aria-hidden="true">
            P
          </div>
          <div>
            <h1>Promptrun chat</h1>
            <p className="subtitle">
              Thread <code>{chat.thread.slice(0, 8)}</code>
              {spent > 0 && <> · spent {formatCost(spent)}</>}
            </p>
          </div>
        </div>
        <div className="header-actions">
          <StatusPill status={chat.stream.status} />
          <button type="button" className="ghost" onClick={chat.newThread}>
            New chat
          </button>
        </div>
      </header>

      <main className="messages" aria-live="polite">
        {chat.messages.length === 0 ? (
          <div className="empty">
            <h2>Say hello</h2>
            <p>
              Answers stream token by token from a stored, versioned prompt. Follow-up questions share the
              thread, so the model remembers the conversation.
            </p>
          </div>
        ) : (
          chat.messages.map((message) => <MessageBubble key={message.id} message={message} />)
        )}
        {chat.stream.error && chat.stream.status !== "open" && (
          <div className="banner" role="alert">
            Live updates interrupted: {chat.stream.error.message}
          </div>
        )}
        <div ref={bottom} />
      </main>

      <footer className="footer">
        <Composer onSend={(message) => void chat.send(message)} disabled={chat.isBusy} />
        <p className="hint">Enter to send · Shift+Enter for a new line</p>
      </footer>
    </div>
  );
}
