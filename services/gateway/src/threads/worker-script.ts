/**
 * How to start a `node:worker_threads` worker whose entry is a module of this package: the compiled `.js` beside
 * the caller; or, running from source (tsx, vitest), a bootstrap that registers tsx's loader (tsx/esm/api, a
 * development dependency) and imports the `.ts` entry (an `--import`ed loader is not applied to a worker's
 * entry file).
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The `Worker` script and `eval` flag for the entry module `name` (without extension) beside the module whose
 * `import.meta.url` is `callerUrl`.
 */
export function workerScript(callerUrl: string, name: string): { script: URL | string; eval: boolean } {
  if (!callerUrl.endsWith(".ts")) return { script: new URL(`./${name}.js`, callerUrl), eval: false };
  const tsx = join(dirname(createRequire(callerUrl).resolve("tsx/package.json")), "dist/esm/api/index.mjs");
  const source = new URL(`./${name}.ts`, callerUrl).href;
  const script = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`;
  return { script, eval: true };
}
