/**
 * Security headers on every answer (helmet): a Content-Security-Policy that loads scripts, styles, fonts and
 * data only from the console itself (`style-src 'unsafe-inline'`: Mantine and the charts set inline styles)
 * and forbids framing (`frame-ancestors 'none'`, clickjacking), `Referrer-Policy: same-origin` (no console
 * path leaks to another site), `X-Content-Type-Options: nosniff`, and HSTS (browsers ignore it on http).
 */
import fastifyHelmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";

/** The CSP directives (helmet's camel-case names). */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** Registers helmet on the root instance (its hooks reach every route). */
export async function securityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(fastifyHelmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    referrerPolicy: { policy: "same-origin" },
    crossOriginEmbedderPolicy: false,
  });
}
