/**
 * The HTML side: `/unauthorized` (no chat session: a link back to the chat to sign in, and the operators'
 * sign-in), the web app's pages (a session is required, else a redirect to /unauthorized), the operator
 * sign-in page `/admin/login`, and the bundle's static assets.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import { SIGNED_OUT_COOKIE } from "../plugins/session.js";
import type { RouteContext } from "./context.js";

/** Paths of the web app's tabs (client-side routes served the same index.html). */
export const APP_PAGES = [
  "/",
  "/profile",
  "/usage",
  "/keys",
  "/teams",
  "/admin",
  "/all-keys",
  "/audit",
] as const;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );

/** The console's icon: a key on the primary blue (served at /favicon.svg, linked from every page). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1971c2"/><circle cx="12" cy="16" r="5" fill="none" stroke="#fff" stroke-width="3"/><path d="M17 16h10m-3 0v4m-4-4v3" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/></svg>
`;

/** The /unauthorized page: plain HTML (it must work even when the bundle is missing). */
export function unauthorizedPage(chatUrl: string, signedOut = false): string {
  const chat = escapeHtml(chatUrl);
  const body = signedOut
    ? `<h1>You signed out of the console</h1>
  <p>Your chat session is still open. Sign in to the console again with it, or go back to the chat.</p>
  <form method="post" action="/signin"><button class="button" type="submit">Sign in again</button></form>
  <p><a href="${chat}">Go to the chat</a></p>`
    : `<h1>Sign in through the chat</h1>
  <p>The key console uses your chat session. Sign in to the chat, then open the console again from the chat's
  avatar menu (entry <b>Console</b>).</p>
  <p><a class="button" href="${chat}">Go to the chat</a></p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in through the chat · Key console</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
  body { font-family: system-ui, sans-serif; background: #f8f9fa; color: #212529; margin: 0; }
  main { max-width: 28rem; margin: 12vh auto; background: #fff; padding: 2rem; border-radius: 8px;
         box-shadow: 0 1px 3px rgba(0,0,0,.1); }
  h1 { font-size: 1.4rem; margin-top: 0; }
  .button { display: inline-block; border: 0; font: inherit; cursor: pointer; background: #1971c2; color: #fff; padding: .6rem 1rem; border-radius: 4px;
             text-decoration: none; font-weight: 600; }
  p.small { font-size: .875rem; color: #495057; }
</style></head>
<body><main>
  ${body}
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
  app.get("/favicon.svg", { config: { access: "public" } }, async (_request, reply) =>
    reply.header("cache-control", "public, max-age=86400").type("image/svg+xml").send(FAVICON_SVG),
  );
  app.get("/unauthorized", { config: { access: "public" } }, async (request, reply) =>
    reply
      .code(401)
      .type("text/html; charset=utf-8")
      .send(unauthorizedPage(ctx.config.chatUrl, request.cookies[SIGNED_OUT_COOKIE] !== undefined)),
  );

  const webRoot = ctx.webRoot;
  const sendApp = (reply: FastifyReply) => {
    if (webRoot === null) {
      return reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send("The console's web bundle is not built: run `npm run build -w services/console`.");
    }
    // The HTML names the hashed assets of one build: revalidate it on every visit, or a browser keeps a
    // page naming assets a redeploy removed (a blank screen). The assets themselves are immutable.
    reply.header("cache-control", "no-cache");
    return reply.sendFile("index.html", webRoot, { cacheControl: false });
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
