/**
 * The HTML side: `/unauthorized` (no chat session: a link back to the chat to sign in, and the operators'
 * sign-in), the web app's pages (a session is required, else a redirect to /unauthorized), the operator
 * sign-in page `/admin/login`, and the bundle's static assets.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { RouteContext } from "./context.js";

/** Paths of the web app's tabs (client-side routes served the same index.html). */
export const APP_PAGES = ["/", "/profile", "/usage", "/keys", "/admin", "/audit"] as const;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

/** The /unauthorized page: plain HTML (it must work even when the bundle is missing). */
export function unauthorizedPage(chatUrl: string): string {
  const chat = escapeHtml(chatUrl);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in through the chat · Key console</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f8f9fa; color: #212529; margin: 0; }
  main { max-width: 28rem; margin: 12vh auto; background: #fff; padding: 2rem; border-radius: 8px;
         box-shadow: 0 1px 3px rgba(0,0,0,.1); }
  h1 { font-size: 1.4rem; margin-top: 0; }
  a.button { display: inline-block; background: #228be6; color: #fff; padding: .6rem 1rem; border-radius: 4px;
             text-decoration: none; font-weight: 600; }
  p.small { font-size: .875rem; color: #868e96; }
</style></head>
<body><main>
  <h1>Sign in through the chat</h1>
  <p>The key console uses your chat session. Sign in to the chat, then open the console again from the chat's
  avatar menu (entry <b>Console</b>).</p>
  <p><a class="button" href="${chat}">Go to the chat</a></p>
  <p class="small">Operator without a chat account? <a href="/admin/login">Sign in with the master key</a>.</p>
</main></body></html>
`;
}

/** The first folder of `candidates` holding an index.html, or null. */
export function findWebRoot(candidates: string[]): string | null {
  return candidates.find((dir) => existsSync(join(dir, "index.html"))) ?? null;
}

/** Registers /unauthorized, the app's pages, /admin/login and the bundle's assets. */
export async function pageRoutes(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.get("/unauthorized", { config: { access: "public" } }, async (_request, reply) =>
    reply.code(401).type("text/html; charset=utf-8").send(unauthorizedPage(ctx.config.chatUrl)),
  );

  const webRoot = ctx.webRoot;
  const sendApp = (reply: FastifyReply) => {
    if (webRoot === null) {
      return reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send("The console's web bundle is not built: run `npm run build -w services/console`.");
    }
    reply.header("cache-control", "no-cache");
    return reply.sendFile("index.html", webRoot);
  };

  if (webRoot !== null) {
    await app.register(fastifyStatic, {
      root: join(webRoot, "assets"),
      prefix: "/assets/",
      // Hashed file names: cache for a year.
      maxAge: "365d",
      immutable: true,
    });
  }
  for (const path of APP_PAGES) {
    app.get(path, { config: { access: "page" } }, async (_request, reply) => sendApp(reply));
  }
  app.get("/admin/login", { config: { access: "public" } }, async (_request, reply) => sendApp(reply));
}
