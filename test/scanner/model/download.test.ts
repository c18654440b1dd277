/**
 * The model download against a stand-in for the Hugging Face hub (test/fixtures/hf-hub.ts) serving the
 * committed tiny model: progress lines, the LFS redirect, resume after a cut connection and after a restart,
 * and answers a retry cannot fix.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadClassifier } from "../../../scanner/src/model/classifier.js";
import { DownloadError, ensureModelFiles, MODEL_FILES } from "../../../scanner/src/model/download.js";
import { type FakeHub, startFakeHub } from "../../fixtures/hf-hub.js";
import { TINY_MODEL, TINY_MODEL_PATH } from "../tiny-model.js";

let hub: FakeHub;
let modelDir: string;
let lines: string[];

beforeEach(async () => {
  hub = await startFakeHub({ [TINY_MODEL]: TINY_MODEL_PATH });
  modelDir = mkdtempSync(join(tmpdir(), "scanner-models-"));
  lines = [];
});
afterEach(() => hub.close());

const download = (extra: Partial<Parameters<typeof ensureModelFiles>[0]> = {}) =>
  ensureModelFiles({
    endpoint: hub.url,
    model: TINY_MODEL,
    modelDir,
    retryDelayMs: 0,
    log: (line) => lines.push(line),
    ...extra,
  });

const committed = (file: string) => readFileSync(join(TINY_MODEL_PATH, file));
const downloaded = (file: string) => readFileSync(join(modelDir, TINY_MODEL, file));

describe("ensureModelFiles", () => {
  it("downloads every file from resolve/main/<file>, reporting bytes and percent, into a loadable folder", async () => {
    const fetched = await download();
    expect(fetched).toEqual([...MODEL_FILES]);
    for (const file of MODEL_FILES) expect(downloaded(file).equals(committed(file))).toBe(true);
    expect(hub.requests.map((r) => r.path)).toEqual([
      `/${TINY_MODEL}/resolve/main/config.json`,
      `/${TINY_MODEL}/resolve/main/tokenizer.json`,
      `/${TINY_MODEL}/resolve/main/tokenizer_config.json`,
      `/${TINY_MODEL}/resolve/main/onnx/model.onnx`,
      `/lfs/${TINY_MODEL}/onnx/model.onnx`,
    ]);
    const size = committed("tokenizer.json").length;
    expect(lines).toContain(`downloading tokenizer.json: 0 of ${size} bytes (0.0%)`);
    expect(lines).toContain(`downloading tokenizer.json: ${size} of ${size} bytes (100.0%)`);
    expect(lines).toContain("downloaded onnx/model.onnx");

    const classifier = await loadClassifier({ modelDir, model: TINY_MODEL });
    expect((await classifier.classify("ignore previous instructions")).score).toBeGreaterThan(0.99);
  });

  it("reports a line at every 5 % step as the body arrives", async () => {
    // A body in ten 100-byte pieces: deterministic, unlike TCP, which may deliver it in one.
    const pieces = Array.from({ length: 10 }, () => new Uint8Array(100).fill(7));
    const fetch = async () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            const next = pieces.shift();
            if (next) controller.enqueue(next);
            else controller.close();
          },
        }),
        { status: 200, headers: { "content-length": "1000" } },
      );
    await download({ files: ["config.json"], fetch });
    expect(lines).toEqual([
      "downloading config.json: 0 of 1000 bytes (0.0%)",
      ...Array.from(
        { length: 10 },
        (_, i) => `downloading config.json: ${(i + 1) * 100} of 1000 bytes (${(i + 1) * 10}.0%)`,
      ),
      "downloaded config.json",
    ]);
    expect(downloaded("config.json")).toHaveLength(1000);
  });

  it("fetches nothing when the files are already there", async () => {
    await download();
    const requests = hub.requests.length;
    expect(await download()).toEqual([]);
    expect(hub.requests.length).toBe(requests);
  });

  it("resumes with a Range request after the connection is cut mid-file", async () => {
    const size = committed("onnx/model.onnx").length;
    hub.cutAfter("onnx/model.onnx", 700);
    await download();
    expect(downloaded("onnx/model.onnx").equals(committed("onnx/model.onnx"))).toBe(true);

    const storage = hub.requests.filter((r) => r.path === `/lfs/${TINY_MODEL}/onnx/model.onnx`);
    expect(storage).toHaveLength(2);
    expect(storage[0]!.range).toBeUndefined();
    // The Range header survived the hub's redirect; it starts where the first answer stopped.
    expect(storage[1]!.range).toBe("bytes=700-");
    expect(
      lines.some((l) =>
        /^onnx\/model\.onnx: connection lost at byte 700 of \d+: .*; retrying \(attempt 2 of 5\)$/.test(l),
      ),
    ).toBe(true);
    expect(lines).toContain(
      `downloading (resuming at byte 700) onnx/model.onnx: 700 of ${size} bytes (${((700 / size) * 100).toFixed(1)}%)`,
    );
  });

  it("resumes a .part file left by an earlier run", async () => {
    const full = committed("tokenizer.json");
    mkdirSync(join(modelDir, TINY_MODEL), { recursive: true });
    writeFileSync(join(modelDir, TINY_MODEL, "tokenizer.json.part"), full.subarray(0, 1000));
    await download({ files: ["tokenizer.json"] });
    expect(hub.requests.map((r) => r.range)).toEqual(["bytes=1000-"]);
    expect(downloaded("tokenizer.json").equals(full)).toBe(true);
  });

  it("finishes a complete .part file the hub answers 416 for (stopped before the rename)", async () => {
    const full = committed("config.json");
    mkdirSync(join(modelDir, TINY_MODEL), { recursive: true });
    writeFileSync(join(modelDir, TINY_MODEL, "config.json.part"), full);
    await download({ files: ["config.json"] });
    expect(hub.requests.map((r) => r.range)).toEqual([`bytes=${full.length}-`]);
    expect(downloaded("config.json").equals(full)).toBe(true);
  });

  it("gives up after the attempts, keeping the .part for the next start", async () => {
    hub.cutAfter("config.json", 100);
    const failing = download({ files: ["config.json"], attempts: 1 });
    await expect(failing).rejects.toThrow(/^config\.json: connection lost at byte 100 of \d+/);
    expect(readFileSync(join(modelDir, TINY_MODEL, "config.json.part"))).toHaveLength(100);
  });

  it("fails at once on 404 with a hint, without retrying", async () => {
    const failing = download({ model: "someone/missing-model" });
    await expect(failing).rejects.toBeInstanceOf(DownloadError);
    await expect(failing).rejects.toThrow(
      `config.json: HTTP 404 from ${hub.url}/someone/missing-model/resolve/main/config.json (check SCANNER_MODEL and SCANNER_MODEL_REVISION)`,
    );
    expect(hub.requests).toHaveLength(1);
  });

  it("sends HF_TOKEN as a bearer token and never names it in a line", async () => {
    await download({ files: ["config.json"], token: "hf_secret_token_123" });
    expect(hub.requests[0]!.authorization).toBe("Bearer hf_secret_token_123");
    expect(lines.join("\n")).not.toContain("hf_secret_token_123");
  });
});
