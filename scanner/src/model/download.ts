/**
 * Fetches a model's files from a Hugging Face hub into a local folder, once: `GET
 * {endpoint}/{model}/resolve/{revision}/{file}` (the hub's download URL; large files answer with a redirect
 * to their storage, which fetch follows). Each file is written to `<file>.part` and renamed when complete;
 * an interrupted download (cut connection, restart of the process) continues from the bytes already on disk
 * with an HTTP `Range: bytes=<offset>-` request (RFC 9110 §14). Progress is reported as lines with bytes
 * and percent.
 */
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

/** The files transformers.js needs for a text-classification model (fp32 ONNX). */
export const MODEL_FILES = [
  "config.json",
  "tokenizer.json",
  "tokenizer_config.json",
  "onnx/model.onnx",
] as const;

/** What to download and where. */
export interface DownloadOptions {
  /** Hub address without trailing slash, e.g. `https://huggingface.co` (HF_ENDPOINT). */
  endpoint: string;
  /** Model id, e.g. `protectai/deberta-v3-base-prompt-injection-v2`. */
  model: string;
  /** Branch, tag or commit. Default `main`. */
  revision?: string;
  /** Folder receiving `<model>/<file>` for each file. */
  modelDir: string;
  files?: readonly string[];
  /** Bearer token for gated or private models (HF_TOKEN). Never logged. */
  token?: string | undefined;
  /** Requests per file before giving up; each retry resumes. Default 5. */
  attempts?: number;
  /** Wait before retry n is n × this, ms. Default 1000. */
  retryDelayMs?: number;
  /** Receives progress lines. */
  log?: (line: string) => void;
  fetch?: typeof globalThis.fetch;
}

/** A download that cannot complete (the message names the file and the reason; never the token). */
export class DownloadError extends Error {
  override name = "DownloadError";
  constructor(
    message: string,
    /** false for answers a retry cannot change (404, 401, …). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

/** First byte and total size from a Content-Range header (`bytes 100-199/1000`, or `bytes` star `/1000` on 416). */
function parseContentRange(header: string | null): { start: number | undefined; total: number | undefined } {
  const match = /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(header?.trim() ?? "");
  if (!match) return { start: undefined, total: undefined };
  return {
    start: match[1] === undefined ? undefined : Number(match[1]),
    total: match[2] === "*" ? undefined : Number(match[2]),
  };
}

/** Progress reporter: a line at the start, at every 5 % step (or 16 MiB without a known size) and at the end. */
function progress(file: string, offset: number, total: number | undefined, log: (line: string) => void) {
  const describe = (bytes: number) =>
    total === undefined
      ? `${file}: ${bytes} bytes (size unknown)`
      : `${file}: ${bytes} of ${total} bytes (${((bytes / Math.max(total, 1)) * 100).toFixed(1)}%)`;
  const step = (bytes: number) =>
    total === undefined
      ? Math.floor(bytes / (16 * 1024 * 1024))
      : Math.floor((bytes / Math.max(total, 1)) * 20);
  let bytes = offset;
  let lastStep = step(offset);
  log(`downloading ${offset > 0 ? `(resuming at byte ${offset}) ` : ""}${describe(offset)}`);
  return {
    get bytes() {
      return bytes;
    },
    add(n: number) {
      bytes += n;
      const now = step(bytes);
      if (now > lastStep) {
        lastStep = now;
        log(`downloading ${describe(bytes)}`);
      }
    },
  };
}

/** One request for `file`, appending to `part` from its current size. Resolves when the file is complete. */
async function fetchOnce(url: string, file: string, part: string, options: DownloadOptions): Promise<void> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const log = options.log ?? (() => {});
  const offset = (await sizeOf(part)) ?? 0;
  const headers: Record<string, string> = {};
  if (offset > 0) headers.range = `bytes=${offset}-`;
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  let response: Response;
  try {
    response = await fetchFn(url, { headers, redirect: "follow" });
  } catch (error) {
    throw new DownloadError(`${file}: request failed: ${(error as Error).message}`, true);
  }

  if (response.status === 416) {
    // Nothing after `offset`: the part may already be complete (the process stopped before the rename).
    await response.body?.cancel();
    const { total } = parseContentRange(response.headers.get("content-range"));
    if (total !== undefined && total === offset) return;
    await rm(part, { force: true });
    throw new DownloadError(
      `${file}: the partial download does not match the file on the hub; starting over`,
      true,
    );
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    const hint =
      response.status === 401 || response.status === 403
        ? " (a gated or private model needs HF_TOKEN)"
        : response.status === 404
          ? " (check SCANNER_MODEL and SCANNER_MODEL_REVISION)"
          : "";
    const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
    throw new DownloadError(`${file}: HTTP ${response.status} from ${url}${hint}`, retryable);
  }
  if (response.body === null) throw new DownloadError(`${file}: empty response from ${url}`, true);

  let start = 0;
  let total: number | undefined;
  const length = response.headers.get("content-length");
  if (response.status === 206) {
    const range = parseContentRange(response.headers.get("content-range"));
    if (range.start !== offset) {
      await response.body.cancel();
      await rm(part, { force: true });
      throw new DownloadError(`${file}: the server resumed at the wrong byte; starting over`, true);
    }
    start = offset;
    total = range.total;
  } else {
    // 200: the server sent the whole file (it ignored Range, or there was nothing to resume).
    total = length === null ? undefined : Number(length);
  }

  const report = progress(file, start, total, log);
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      report.add(chunk.length);
      done(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>),
      counter,
      createWriteStream(part, { flags: start > 0 ? "a" : "w" }),
    );
  } catch (error) {
    throw new DownloadError(
      `${file}: connection lost at byte ${report.bytes}${total === undefined ? "" : ` of ${total}`}: ${(error as Error).message}`,
      true,
    );
  }
  if (total !== undefined && report.bytes !== total) {
    throw new DownloadError(`${file}: connection closed at byte ${report.bytes} of ${total}`, true);
  }
}

/**
 * Makes sure every file of `options.model` is in `<modelDir>/<model>/`, downloading the missing ones.
 * Files already present are not fetched again.
 * @returns the files that were downloaded (empty when all were present)
 * @throws DownloadError when a file cannot be fetched after `attempts` requests, or at once for answers a
 * retry cannot change (401, 403, 404); its `.part` file stays for the next start to resume
 */
export async function ensureModelFiles(options: DownloadOptions): Promise<string[]> {
  const attempts = options.attempts ?? 5;
  const delayMs = options.retryDelayMs ?? 1000;
  const log = options.log ?? (() => {});
  const fetched: string[] = [];
  for (const file of options.files ?? MODEL_FILES) {
    const target = join(options.modelDir, options.model, file);
    if ((await sizeOf(target)) !== undefined) continue;
    const url = `${options.endpoint}/${options.model}/resolve/${encodeURIComponent(options.revision ?? "main")}/${file}`;
    const part = `${target}.part`;
    await mkdir(dirname(target), { recursive: true });
    for (let attempt = 1; ; attempt++) {
      try {
        await fetchOnce(url, file, part, options);
        break;
      } catch (error) {
        if (!(error instanceof DownloadError) || !error.retryable || attempt >= attempts) throw error;
        log(`${error.message}; retrying (attempt ${attempt + 1} of ${attempts})`);
        await new Promise((wake) => setTimeout(wake, delayMs * attempt));
      }
    }
    await rename(part, target);
    log(`downloaded ${file}`);
    fetched.push(file);
  }
  return fetched;
}
