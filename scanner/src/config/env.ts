/**
 * The scanner's environment, read and validated in one place. Every variable and its default is listed in
 * the README's "Scanner" section.
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** The scanner package's folder: this file sits at scanner/{src,dist}/config/, in the checkout and the image. */
export const scannerRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The classifier served when SCANNER_MODEL is unset (Apache-2.0, labels SAFE/INJECTION, 512 tokens). */
export const DEFAULT_MODEL = "protectai/deberta-v3-base-prompt-injection-v2";

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

const envSchema = z.object({
  PORT: int(8000),
  HOST: z.string().default("0.0.0.0"),
  SCANNER_MODEL: z
    .string()
    .regex(/^[\w.-]+(\/[\w.-]+)?$/, "must be a hub model id such as owner/name")
    .refine((v) => !v.split("/").some((part) => part === "." || part === ".."), "must not contain . or ..")
    .default(DEFAULT_MODEL),
  SCANNER_MODEL_DIR: z.string().min(1).default(`${scannerRoot}models`),
  SCANNER_MODEL_REVISION: z
    .string()
    .regex(/^[\w.-]+$/, "must be a branch, tag or commit")
    .default("main"),
  /** The Hugging Face hub's address (huggingface_hub's own variable). */
  HF_ENDPOINT: z.url().default("https://huggingface.co"),
  HF_TOKEN: z.string().optional(),
  SCANNER_MAX_CHARS: int(100_000, 1),
  SCANNER_WINDOW_TOKENS: int(512, 8),
  SCANNER_WINDOW_OVERLAP: int(128),
  SCANNER_BATCH_WINDOWS: int(8, 1),
  SCANNER_DOWNLOAD_ATTEMPTS: int(5, 1),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Validated scanner settings. Lengths in characters (JavaScript string length) or tokens, as named. */
export interface ScannerEnv {
  port: number;
  host: string;
  /** Hub model id, e.g. `protectai/deberta-v3-base-prompt-injection-v2`; also its folder under modelDir. */
  model: string;
  /** Absolute folder holding `<model>/config.json`, `<model>/onnx/model.onnx`, … */
  modelDir: string;
  revision: string;
  hubEndpoint: string;
  /** HF_TOKEN for gated models; sent to the hub only, never logged. */
  hubToken: string | undefined;
  /** Longest `text` accepted, characters; longer is answered 413. */
  maxChars: number;
  /** Tokens per window including the model's special tokens (capped by the model's own maximum). */
  windowTokens: number;
  /** Tokens shared by consecutive windows. */
  windowOverlap: number;
  /** Windows per inference call. */
  batchWindows: number;
  downloadAttempts: number;
  logLevel: string;
}

/** Raised for an invalid environment; the message names each variable and what is wrong. */
export class EnvError extends Error {
  override name = "EnvError";
}

/**
 * Reads the scanner's settings from an environment map.
 * @throws EnvError naming every invalid variable.
 */
export function readEnv(source: NodeJS.ProcessEnv = process.env): ScannerEnv {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new EnvError(`invalid environment:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.SCANNER_WINDOW_OVERLAP >= e.SCANNER_WINDOW_TOKENS / 2) {
    throw new EnvError(
      `invalid environment:\n  SCANNER_WINDOW_OVERLAP: must be less than half of SCANNER_WINDOW_TOKENS (${e.SCANNER_WINDOW_TOKENS})`,
    );
  }
  // `npm start -w scanner` runs in scanner/; a relative path is relative to where npm was invoked.
  const base = source.INIT_CWD ?? process.cwd();
  return {
    port: e.PORT,
    host: e.HOST,
    model: e.SCANNER_MODEL,
    modelDir: isAbsolute(e.SCANNER_MODEL_DIR) ? e.SCANNER_MODEL_DIR : resolve(base, e.SCANNER_MODEL_DIR),
    revision: e.SCANNER_MODEL_REVISION,
    hubEndpoint: e.HF_ENDPOINT.replace(/\/+$/, ""),
    hubToken: e.HF_TOKEN === "" ? undefined : e.HF_TOKEN,
    maxChars: e.SCANNER_MAX_CHARS,
    windowTokens: e.SCANNER_WINDOW_TOKENS,
    windowOverlap: e.SCANNER_WINDOW_OVERLAP,
    batchWindows: e.SCANNER_BATCH_WINDOWS,
    downloadAttempts: e.SCANNER_DOWNLOAD_ATTEMPTS,
    logLevel: e.LOG_LEVEL,
  };
}
