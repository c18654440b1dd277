/**
 * The gateway as a process, started the way `npm run dev` starts it: start-up messages, and SIGTERM during a
 * stream (the stream finishes, new connections are refused, the process exits 0).
 */
import { once } from "node:events";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, writeConfig } from "../../helpers/gateway.js";
import {
  freePort,
  logLines,
  startGatewayProcess as startServer,
  waitLive,
} from "../../helpers/gateway-process.js";

describe("gateway process", () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  it("finishes an in-flight stream on SIGTERM, refuses new connections, and exits 0", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { child, output } = startServer({
      PORT: String(port),
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_CONFIG: writeConfig(`model_list:\n${deployment("general", upstream.url)}`),
    });
    try {
      await waitLive(url);
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: MASTER_KEY, maxRetries: 0 });
      const hold = upstream.holdNextStream();
      const stream = await client.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: "finish me" }],
        stream: true,
      });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      await hold.firstChunkSent;

      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await expect.poll(() => output()).toContain("shutting down");
      await expect(fetch(`${url}/health/liveliness`)).rejects.toThrow(); // no longer accepting
      hold.release();
      let text = "";
      for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
        text += r.value.choices[0]?.delta.content ?? "";
      }
      expect(text).toBe("You said: finish me");
      const [code] = await exited;
      expect(code).toBe(0);
      expect(output()).toContain("shutdown complete");
      // Started without METRICS_TOKEN: one line says /metrics answers loopback callers only.
      const said = logLines(output()).filter((line) => String(line.msg).includes("METRICS_TOKEN"));
      expect(said).toHaveLength(1);
      expect(said[0]?.msg).toContain("loopback");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("refuses to start on a broken config with a message naming the file", async () => {
    const config = writeConfig(
      "model_list:\n  - model_name: general\n    litellm_params: {model: openai/x, api_key: os.environ/NOT_SET_ANYWHERE}\n",
    );
    const { child, output } = startServer({ PORT: String(await freePort()), GATEWAY_CONFIG: config });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(output()).toContain("cannot start");
    expect(output()).toContain(config);
    expect(output()).toContain("NOT_SET_ANYWHERE");
  });
});
