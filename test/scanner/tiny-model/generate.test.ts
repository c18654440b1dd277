/**
 * The committed tiny model is exactly what scanner/tiny-model/generate.py writes (Debian's python3 with
 * python3-onnx, listed in .ci/apt-packages), so the generator and the files cannot drift apart.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TINY_MODEL_PATH } from "../tiny-model.js";

const PYTHON = "/usr/bin/python3";
const GENERATOR = fileURLToPath(new URL("../../../scanner/tiny-model/generate.py", import.meta.url));
const FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"];
const hasOnnx = spawnSync(PYTHON, ["-c", "import onnx"]).status === 0;

describe("scanner/tiny-model/generate.py", () => {
  // Skipped only where python3-onnx is not installed (.ci/run installs it from .ci/apt-packages).
  it.skipIf(!hasOnnx)("regenerates the committed files byte for byte", () => {
    const out = mkdtempSync(join(tmpdir(), "tiny-model-"));
    execFileSync(PYTHON, [GENERATOR, out]);
    for (const file of FILES) {
      expect(readFileSync(join(out, file)).equals(readFileSync(join(TINY_MODEL_PATH, file))), file).toBe(
        true,
      );
    }
  });
});
