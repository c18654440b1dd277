import { describe, expect, it } from "vitest";
import { DEFAULT_MODEL, readEnv, scannerRoot } from "../../../scanner/src/config/env.js";

describe("readEnv", () => {
  it("defaults to the protectai model in scanner/models, port 8000, 100,000 characters", () => {
    const env = readEnv({});
    expect(env).toMatchObject({
      port: 8000,
      model: DEFAULT_MODEL,
      modelDir: `${scannerRoot}models`,
      revision: "main",
      hubEndpoint: "https://huggingface.co",
      hubToken: undefined,
      maxChars: 100_000,
      windowTokens: 512,
      windowOverlap: 128,
    });
  });

  it("resolves a relative SCANNER_MODEL_DIR against the folder npm was started in", () => {
    expect(readEnv({ SCANNER_MODEL_DIR: "scanner/tiny-model", INIT_CWD: "/repo" }).modelDir).toBe(
      "/repo/scanner/tiny-model",
    );
    expect(readEnv({ SCANNER_MODEL_DIR: "/models" }).modelDir).toBe("/models");
  });

  it("names every invalid variable", () => {
    expect(() => readEnv({ SCANNER_MAX_CHARS: "0", SCANNER_MODEL: "../etc", HF_ENDPOINT: "nope" })).toThrow(
      /^invalid environment:\n {2}SCANNER_MODEL: must not contain \. or \.\.\n {2}HF_ENDPOINT: .*\n {2}SCANNER_MAX_CHARS: /,
    );
    expect(() => readEnv({ SCANNER_MODEL: "a/b/c" })).toThrow(
      "SCANNER_MODEL: must be a hub model id such as owner/name",
    );
    expect(() => readEnv({ SCANNER_WINDOW_TOKENS: "100", SCANNER_WINDOW_OVERLAP: "50" })).toThrow(
      "SCANNER_WINDOW_OVERLAP: must be less than half of SCANNER_WINDOW_TOKENS (100)",
    );
  });
});
