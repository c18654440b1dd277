/**
 * Paths of the checkout and reading of the files the stack ships into containers.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the repository root (the platform root: Pulumi.yaml, .env, chat-app.yaml). */
export const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A file to copy into a container at creation (pulumi-docker `uploads`): absolute target path + text. */
export interface Upload {
  file: string;
  content: string;
}

/**
 * Reads a text file of the checkout.
 * @param relPath path relative to the repository root.
 * @throws Error naming the file when it does not exist.
 */
export function readRepoFile(relPath: string, root: string = REPO_ROOT): string {
  const abs = path.join(root, relPath);
  if (!existsSync(abs)) throw new Error(`${relPath} is missing (looked in ${root})`);
  return readFileSync(abs, "utf8");
}

/**
 * Every file under a folder of the checkout, as uploads below `containerDir` (same relative layout),
 * sorted by path so the container definition is stable.
 * @throws Error naming the folder when it does not exist or holds no file (a deployment without it would
 *   silently run on the image's defaults).
 */
export function uploadTree(relDir: string, containerDir: string, root: string = REPO_ROOT): Upload[] {
  const base = path.join(root, relDir);
  if (!existsSync(base) || !statSync(base).isDirectory()) {
    throw new Error(`${relDir}/ is missing (looked in ${root})`);
  }
  const out: Upload[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile()) {
        const rel = path.relative(base, abs).split(path.sep).join("/");
        out.push({ file: `${containerDir}/${rel}`, content: readFileSync(abs, "utf8") });
      }
    }
  };
  walk(base);
  if (out.length === 0) throw new Error(`${relDir}/ holds no file (looked in ${root})`);
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

/**
 * One file of the checkout as an upload to `containerFile`.
 * @throws Error naming the file when it does not exist (see {@link readRepoFile}).
 */
export function requiredUpload(relPath: string, containerFile: string, root: string = REPO_ROOT): Upload {
  return { file: containerFile, content: readRepoFile(relPath, root) };
}
