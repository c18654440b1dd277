/**
 * How the config loader names things in its messages: paths inside the file, the type of a value (never the
 * value itself: a config holds keys), and "did you mean" for misspelt keys.
 */

/** A path inside the file, e.g. `["model_list", 1, "litellm_params", "api_key"]`. */
export type Path = ReadonlyArray<string | number>;
/** A YAML mapping. */
export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `model_list[1].litellm_params.api_key`; the empty path is "the top level". */
export function formatPath(path: Path): string {
  if (path.length === 0) return "the top level";
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** The value at `path` inside `value`, or undefined. */
export function valueAt(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** A YAML-flavoured name of a value's type, never the value itself. */
export function describe(value: unknown): string {
  if (value === null) return "an empty value";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "true/false";
  if (typeof value === "string") return value === "" ? "an empty string" : "a string";
  return typeof value;
}

/** A YAML-flavoured name of a zod type name (`int` → "an integer"). */
export function expectedName(expected: string): string {
  const names: Record<string, string> = {
    number: "a number",
    int: "an integer",
    string: "a string",
    array: "a list",
    object: "a mapping",
    record: "a mapping",
    boolean: "true or false",
  };
  return names[expected] ?? expected;
}

/** Levenshtein distance, for "did you mean" on misspelt keys. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Seconds (the file's unit) → ms (the loaded config's unit). */
export function toMs(secondsValue: number | undefined): number | undefined {
  return secondsValue === undefined ? undefined : Math.round(secondsValue * 1000);
}

/** `{[key]: value}` when value is defined, `{}` otherwise (keeps optional fields absent, not undefined). */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
