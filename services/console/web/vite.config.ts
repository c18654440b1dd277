/**
 * Builds the console's web app into services/console/dist/web (served by the console server).
 * `npm run build -w services/console` runs it.
 */
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  plugins: [react()],
  // The shared schemas from source (the browser checks forms with them), whether or not the package is built.
  resolve: {
    alias: {
      "@platform/admin-api": fileURLToPath(
        new URL("../../../packages/admin-api/src/index.ts", import.meta.url),
      ),
    },
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { "/api": "http://localhost:3001" } },
});
