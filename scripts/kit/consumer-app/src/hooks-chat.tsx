import { PromptrunProvider, useChat } from "@promptrun/react";
import { Composer } from "./composer";

function Chat() {
  const chat = useChat({ channel: "chat" });
  return (
    <div>
      <p data-testid="status" data-status={chat.stream.status}>
        {chat.stream.status}
      </p>
      {chat.messages.map((message) =>
        message.role === "user" ? (
          <p key={message.id} data-role="user">
            {message.content}
          </p>
        ) : (
          <p key={message.id} data-role="assistant" data-status={message.status}>
            {message.content}
          </p>
        ),
      )}
      <Composer onSend={(text) => void chat.send(text)} disabled={chat.isBusy} />
    </div>
  );
}

/** The chat with Promptrun's own hooks, through the app's backend at /api. */
export function HooksChat() {
  return (
    <PromptrunProvider backend={{ baseUrl: "/api" }}>
      <Chat />
    </PromptrunProvider>
  );
}
