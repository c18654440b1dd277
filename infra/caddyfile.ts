/**
 * The vm stack's Caddyfile: HTTPS per public host, and the Set-Cookie rewrite that lets the console read the
 * chat's session (cookie domain COOKIE_DOMAIN, SameSite=Lax, both over HTTPS).
 */

/** One site of the reverse proxy. */
export interface ProxySite {
  /** Caddy site address: `chat.example.com` (automatic HTTPS) or `http://127.0.0.1:8080` (tests). */
  address: string;
  /** `host:port` of the upstream inside the network, e.g. `chat:3080`. */
  upstream: string;
  /** Rewrite the upstream's Set-Cookie to the shared domain with SameSite=Lax (chat and console). */
  sharedCookie: boolean;
  /** Paths answered 404 by the proxy itself, never passed on (`/metrics`: Prometheus scrapes it inside). */
  internalPaths?: string[];
}

/** Inputs of {@link renderCaddyfile}. */
export interface CaddyfileOptions {
  sites: ProxySite[];
  /** Leading-dot cookie domain, e.g. `.example.com`. */
  cookieDomain: string;
  /** ACME account e-mail, if any. */
  acmeEmail?: string;
  /** Plain-HTTP port answering `GET /healthz` with 200, for the container's health check. */
  healthPort: number;
}

/** Characters that would break out of a quoted Caddyfile token or a cookie attribute. */
const UNSAFE = /["\\\s;{}]/;

/**
 * Renders the Caddyfile.
 *
 * Cookie rewrite (Caddy `reverse_proxy` → `header_down <field> <regexp> <replacement>`, applied in order to
 * every Set-Cookie value): drop a Domain and a SameSite attribute, then append `Domain=<cookieDomain>;
 * SameSite=Lax`. LibreChat sets its refresh token host-only with SameSite=Strict, which the console on
 * another subdomain never receives.
 * @throws Error when the cookie domain or an address holds characters unsafe in a Caddyfile token.
 */
export function renderCaddyfile(options: CaddyfileOptions): string {
  const { sites, cookieDomain, acmeEmail, healthPort } = options;
  const values = sites.flatMap((s) => [s.address, s.upstream, ...(s.internalPaths ?? [])]);
  for (const value of [cookieDomain, acmeEmail ?? "", ...values]) {
    if (UNSAFE.test(value)) throw new Error(`unsafe value in Caddyfile: ${JSON.stringify(value)}`);
  }
  const global = ["{", "\tadmin off", ...(acmeEmail ? [`\temail ${acmeEmail}`] : []), "}"];
  const snippet = [
    "(shared_cookie) {",
    // An empty replacement would read as "set the header" (Caddy 2.6): keep the rest via capture groups instead.
    '\theader_down Set-Cookie "(?i)^(.*?);\\s*domain=[^;]*(.*)$" "$1$2"',
    '\theader_down Set-Cookie "(?i)^(.*?);\\s*samesite=[^;]*(.*)$" "$1$2"',
    `\theader_down Set-Cookie "$" "; Domain=${cookieDomain}; SameSite=Lax"`,
    "}",
  ];
  const blocks = sites.map((site) => [
    `${site.address} {`,
    ...(site.internalPaths ?? []).map((path) => `\trespond ${path} 404`),
    `\treverse_proxy ${site.upstream}${site.sharedCookie ? " {" : ""}`,
    ...(site.sharedCookie ? ["\t\timport shared_cookie", "\t}"] : []),
    "}",
  ]);
  const health = [`:${healthPort} {`, '\trespond /healthz "OK" 200', "}"];
  return `${[global, snippet, ...blocks, health].map((b) => b.join("\n")).join("\n\n")}\n`;
}
