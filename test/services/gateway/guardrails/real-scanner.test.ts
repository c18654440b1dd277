/**
 * The gateway's prompt_injection guardrail against the real scanner (scanner/src with the committed tiny model),
 * not its contract fake: the request the gateway sends and the answer it reads are the scanner's own, so a
 * drift between the two sides (path, field names, label or score semantics) fails here.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { startTinyScanner, type TinyScanner } from "../../../helpers/scanner.js";
import { INJECTION } from "../../../scanner/tiny-model.js";
import { refusal } from "./helpers.js";

const POLICY = `guardrails:
  prompt_injection:
    mode: enforce
    threshold: 0.9
    roles: [user]
    on_error: fail_closed
    timeout_ms: 10000
`;

let upstream: FakeUpstream;
let scanner: TinyScanner;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  scanner = await startTinyScanner();
  const policyPath = join(mkdtempSync(join(tmpdir(), "gw-real-scanner-")), "policy.yaml");
  writeFileSync(policyPath, POLICY);
  // The guardrail reads the scanner's address from the process environment, as in production.
  process.env.GUARD_SCANNER_API_BASE = scanner.url;
  gw = await startTestGateway(`model_list:\n${deployment("general", upstream.url)}`, {
    GUARDRAIL_POLICY: policyPath,
  });
}, 60_000);
afterAll(async () => {
  delete process.env.GUARD_SCANNER_API_BASE;
  await gw?.close();
  await Promise.all([upstream?.close(), scanner?.close()]);
});

const ask = (content: string) => [{ role: "user" as const, content }];

describe("prompt_injection with the real scanner", () => {
  it("a benign prompt passes with the scanner's low score in the decision header", async () => {
    const { data, response } = await gw.client.chat.completions
      .create({ model: "general", messages: ask("please write a short summary of the project report") })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(
      "You said: please write a short summary of the project report",
    );
    expect(response.headers.get("x-guardrail-decisions")).toMatch(/^prompt_injection=allow:0\.\d+$/);
  });

  it("an instruction override is refused 400 and never reaches the upstream", async () => {
    const sentBefore = upstream.completions;
    const error = (await refusal(() =>
      gw.client.chat.completions.create({ model: "general", messages: ask(INJECTION) }),
    )) as { status: number; code: string; headers?: Headers };
    expect(error.status).toBe(400);
    expect(error.code).toBe("prompt_injection_detected");
    expect(error.headers?.get("x-guardrail-decisions")).toMatch(/^prompt_injection=block:(0\.9\d*|1)$/);
    expect(upstream.completions).toBe(sentBefore);
  });
});
