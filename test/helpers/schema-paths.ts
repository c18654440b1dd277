/**
 * The string-typed field paths of a request's JSON Schema, and a body with a value placed at one of them: for
 * tests that check a reader of request bodies against a published request shape (OpenAI's OpenAPI description,
 * Anthropic's Messages reference). Follows `$ref` (through `resolve`), `oneOf` / `anyOf` / `allOf`, `items`,
 * `properties` and `additionalProperties` (an open map gets the key `x_extra`), to a bounded depth; a `$ref`
 * already open twice on the way down is not entered again.
 */

type Schema = Record<string, unknown>;

/** One step of a path: the key, and the constant fields (`type: "message"`) of the object holding it, if any. */
export interface PathStep {
  key: string | number;
  consts?: Record<string, string>;
}

const isObj = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether the schema admits a string (a `string` type, or a string `const` / `enum`). */
function admitsString(s: Schema): boolean {
  const t = s.type;
  if (t === "string" || (Array.isArray(t) && t.includes("string"))) return true;
  if (typeof s.const === "string") return true;
  return Array.isArray(s.enum) && s.enum.some((v) => typeof v === "string");
}

/** The string constants of an object schema's properties (`type: {const: "message"}`, one-value enums). */
function constsOf(s: Schema, resolve: (ref: string) => Schema): Record<string, string> | undefined {
  if (!isObj(s.properties)) return undefined;
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(s.properties)) {
    const p = isObj(raw) && typeof raw.$ref === "string" ? resolve(raw.$ref) : raw;
    if (!isObj(p)) continue;
    const value =
      typeof p.const === "string"
        ? p.const
        : Array.isArray(p.enum) && p.enum.length === 1 && typeof p.enum[0] === "string"
          ? p.enum[0]
          : typeof p.default === "string" && key === "type"
            ? p.default
            : undefined;
    if (value !== undefined) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Every string-typed path of `schema` (deduplicated, at most `maxDepth` steps), each as its steps.
 * @throws Error when a `$ref` does not resolve (from `resolve`).
 */
export function stringPaths(schema: Schema, resolve: (ref: string) => Schema, maxDepth = 9): PathStep[][] {
  const found = new Map<string, PathStep[]>();
  const visit = (node: unknown, path: PathStep[], open: string[]): void => {
    if (!isObj(node) || path.length > maxDepth) return;
    if (typeof node.$ref === "string") {
      const ref = node.$ref;
      if (open.filter((r) => r === ref).length >= 2) return;
      visit(resolve(ref), path, [...open, ref]);
    }
    for (const k of ["oneOf", "anyOf", "allOf"]) {
      const branches = node[k];
      if (Array.isArray(branches)) for (const b of branches) visit(b, path, open);
    }
    if (admitsString(node) && path.length > 0) found.set(JSON.stringify(path.map((p) => p.key)), path);
    if (node.items !== undefined) visit(node.items, [...path, { key: 0 }], open);
    const consts = constsOf(node, resolve);
    if (isObj(node.properties)) {
      for (const [key, sub] of Object.entries(node.properties)) {
        visit(sub, [...path, consts === undefined ? { key } : { key, consts }], open);
      }
    }
    const extra = node.additionalProperties;
    if (extra === true || isObj(extra)) {
      const sub = extra === true || Object.keys(extra).length === 0 ? { type: "string" } : extra;
      visit(sub, [...path, { key: "x_extra" }], open);
    }
  };
  visit(schema, [], []);
  return [...found.values()];
}

/**
 * A body with `value` at `path` (objects and arrays made on the way, each object given its step's constants),
 * merged into a copy of `base` (e.g. `{model: "m"}`).
 */
export function bodyWith(path: PathStep[], value: string, base: Schema): Schema {
  const body: Schema = structuredClone(base);
  let holder: Record<string | number, unknown> = body;
  path.forEach((step, i) => {
    for (const [k, v] of Object.entries(step.consts ?? {})) if (k !== step.key) holder[k] = v;
    if (i === path.length - 1) {
      holder[step.key] = value;
      return;
    }
    const next = path[i + 1] as PathStep;
    const existing = holder[step.key];
    const child =
      typeof existing === "object" && existing !== null ? existing : typeof next.key === "number" ? [] : {};
    holder[step.key] = child;
    holder = child as Record<string | number, unknown>;
  });
  return body;
}

/** A path as one readable line: `input[0].content[0].image_url`. */
export const pathName = (path: PathStep[]): string =>
  path.map((p, i) => (typeof p.key === "number" ? `[${p.key}]` : i === 0 ? p.key : `.${p.key}`)).join("");
