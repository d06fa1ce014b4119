import { PromptrunProvider } from "@promptrun/react";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ChatApp } from "./chat-app.tsx";

const root = document.getElementById("root");
if (!root) throw new Error("missing #root");

createRoot(root).render(
  <StrictMode>
    {/* The app's own backend (src/example-server.ts): it holds the API key. */}
    <PromptrunProvider backend={{ baseUrl: "/api" }}>
      <ChatApp />
    </PromptrunProvider>
  </StrictMode>,
);
