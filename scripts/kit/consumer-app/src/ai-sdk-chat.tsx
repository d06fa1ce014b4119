import { useChat } from "@ai-sdk/react";
import { PromptrunChatTransport } from "@promptrun/client/ai-sdk";
import { useState } from "react";
import { Composer } from "./composer";

const postJson = async (path: string, body: unknown) => {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(((await response.json()) as { error: string }).error);
  return response.json();
};

const transport = new PromptrunChatTransport({
  createRun: ({ thread, message }) => postJson("/api/chat", { thread, message }),
  getToken: (thread) => postJson("/api/token", { thread }),
});

/** The same chat with the AI SDK's useChat: only the transport is Promptrun's. */
export function AiSdkChat() {
  const [id] = useState(() => crypto.randomUUID());
  const { messages, sendMessage, status } = useChat({ id, transport });
  return (
    <div>
      <p data-testid="status" data-status={status}>
        {status}
      </p>
      {messages.map((message) => (
        <p
          key={message.id}
          data-role={message.role}
          data-status={message.role === "assistant" && status === "ready" ? "completed" : "streaming"}
        >
          {message.parts.map((part) => (part.type === "text" ? part.text : "")).join("")}
        </p>
      ))}
      <Composer onSend={(text) => void sendMessage({ text })} disabled={status !== "ready"} />
    </div>
  );
}
