/** GET /health and the scan route while the model loads, after it loaded, and after loading failed. */
import { describe, expect, it } from "vitest";
import { buildApp } from "../../../scanner/src/app.js";
import { createMetrics } from "../../../scanner/src/metrics/metrics.js";
import { loadClassifier } from "../../../scanner/src/model/classifier.js";
import { ModelSlot } from "../../../scanner/src/model/model-slot.js";
import { TINY_MODEL, TINY_MODEL_DIR } from "../tiny-model.js";

function setup() {
  const metrics = createMetrics();
  const slot = new ModelSlot(TINY_MODEL, metrics);
  const app = buildApp({ slot, metrics, maxChars: 1000 });
  return { app, slot, metrics };
}

describe("GET /health", () => {
  it("answers 503 until the model is loaded, then 200, and /v1/scan follows", async () => {
    const { app, slot, metrics } = setup();
    const loading = await app.inject({ method: "GET", url: "/health" });
    expect(loading.statusCode).toBe(503);
    expect(loading.json()).toEqual({ status: "loading", model: TINY_MODEL });
    const early = await app.inject({ method: "POST", url: "/v1/scan", payload: { text: "hello" } });
    expect(early.statusCode).toBe(503);
    expect(early.json().error).toMatchObject({ type: "service_unavailable_error", code: "model_not_ready" });
    expect(await metrics.registry.getSingleMetricAsString("scanner_model_loaded")).toContain(
      "scanner_model_loaded 0",
    );

    slot.ready(await loadClassifier({ modelDir: TINY_MODEL_DIR, model: TINY_MODEL }));
    const ready = await app.inject({ method: "GET", url: "/health" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ok", model: TINY_MODEL, window_tokens: 512 });
    const scan = await app.inject({ method: "POST", url: "/v1/scan", payload: { text: "hello" } });
    expect(scan.statusCode).toBe(200);
    expect(await metrics.registry.getSingleMetricAsString("scanner_model_loaded")).toContain(
      "scanner_model_loaded 1",
    );
    await app.close();
  });

  it("answers 503 with the reason after loading failed", async () => {
    const { app, slot } = setup();
    slot.fail("onnx/model.onnx: HTTP 404");
    const res = await app.inject({ method: "GET", url: "/health" });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: "failed", model: TINY_MODEL, error: "onnx/model.onnx: HTTP 404" });
    await app.close();
  });
});
