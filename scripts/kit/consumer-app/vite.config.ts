import { defineConfig } from "vite";

// esbuild's own JSX transform: no @vitejs/plugin-react needed.
export default defineConfig({ esbuild: { jsx: "automatic" } });
