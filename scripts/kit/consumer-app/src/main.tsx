import { createRoot } from "react-dom/client";
import { AiSdkChat } from "./ai-sdk-chat";
import { HooksChat } from "./hooks-chat";

const variant = new URLSearchParams(location.search).get("variant");
const root = document.getElementById("root");
if (root) createRoot(root).render(variant === "ai-sdk" ? <AiSdkChat /> : <HooksChat />);
