// All a Vite app needs for tlsproof: the cross-origin isolation headers, for the dev server and
// for `vite preview` (a production host sets the same two headers).
import { defineConfig } from "vite";

const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
export default defineConfig({ server: { headers }, preview: { headers } });
