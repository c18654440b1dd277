/**
 * Attacks on the gateway's budgets and metrics, as a hostile client would try them, against real gateway
 * processes: two instances sharing a fresh Postgres database (dropped at the end) and Redis, in front of the fake
 * upstream, with one virtual key made through the admin API. Prints what each attack achieved.
 *
 *   npx tsx bench/attack/budget.ts [--attack chunked,burst,metrics] [--budget 0.5] …   (--help for all flags)
 *
 * - chunked: `--chunked-calls` concurrent calls with `transfer-encoding: chunked` (no content-length),
 *   `max_tokens: 1` and a ~4 KB prompt, all on one instance. Spend must stay within the budget.
 * - burst: `--burst-calls` calls at once, alternating between the two instances, `max_tokens: 10`. Spend must stay
 *   within the budget.
 * - metrics: `--unknown-models` calls naming models that do not exist; `/metrics` must not grow with them.
 *
 * Spend is the sum of `x-litellm-response-cost` over the answered calls (every call is non-streamed).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AdminApiClient } from "@platform/admin-api";
import { chunkedBody } from "../../test/helpers/chunked.js";
import { readyLine, type Service, spawnGateway, spawnService } from "../lib/children.js";
import { type BenchDatabase, createBenchDatabase } from "../lib/full-pipeline.js";

const help = `Usage: npx tsx bench/attack/budget.ts [flags]

  --attack <list>          comma-separated: chunked, burst, metrics (default all three)
  --budget <usd>           max_budget of the attacked key (default 0.5)
  --price <usd>            input and output price per token of the model (default 0.00005)
  --chunked-calls <n>      concurrent chunked uploads (default 150)
  --burst-calls <n>        calls at once over the two instances (default 1000)
  --unknown-models <n>     distinct unknown model names (default 3000)
  --postgres <url>         admin URL of the Postgres to create the throw-away database in
                           (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis <url>            REDIS_URL of both instances (default redis://127.0.0.1:6379)
  --help                   this text
`;

const { values: flags } = parseArgs({
  options: {
    attack: { type: "string", default: "chunked,burst,metrics" },
    budget: { type: "string", default: "0.5" },
    price: { type: "string", default: "0.00005" },
    "chunked-calls": { type: "string", default: "150" },
    "burst-calls": { type: "string", default: "1000" },
    "unknown-models": { type: "string", default: "3000" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    help: { type: "boolean", default: false },
  },
});
if (flags.help) {
  process.stdout.write(help);
  process.exit(0);
}

const attacks = new Set(String(flags.attack).split(","));
const budget = Number(flags.budget);
const price = Number(flags.price);
const masterKey = `sk-attack-master-${randomBytes(8).toString("hex")}`;
const services: Service[] = [];
let database: BenchDatabase | undefined;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** A model registry with one priced alias, `attacked`, at the fake upstream. */
function writeConfig(upstreamUrl: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "attack-")), "gateway.yaml");
  writeFileSync(
    path,
    [
      "model_list:",
      "  - model_name: attacked",
      "    litellm_params:",
      "      model: openai/fake-model",
      `      api_base: ${upstreamUrl}`,
      `      input_cost_per_token: ${price}`,
      `      output_cost_per_token: ${price}`,
      "",
    ].join("\n"),
  );
  return path;
}

async function startGateway(name: string, config: string): Promise<string> {
  const { service, origin } = await spawnGateway(name, {
    GATEWAY_CONFIG: config,
    GATEWAY_MASTER_KEY: masterKey,
    LOG_LEVEL: "warn",
    DATABASE_URL: database!.url,
    REDIS_URL: String(flags.redis),
  });
  services.push(service);
  return origin;
}

/** A fresh virtual key with `max_budget` (USD) and nothing else. */
async function newKey(origin: string, maxBudget: number): Promise<string> {
  const admin = new AdminApiClient({ baseUrl: origin, masterKey });
  const { key } = await admin.generateKey({
    key_alias: `attack-${randomBytes(4).toString("hex")}`,
    max_budget: maxBudget,
  });
  return key;
}

interface Tally {
  answered: number;
  refused: Map<number, number>;
  spent: number;
}

/** Sends every request at once; tallies statuses and the cost headers. */
async function fire(requests: Array<() => Promise<Response>>): Promise<Tally> {
  const tally: Tally = { answered: 0, refused: new Map(), spent: 0 };
  await Promise.all(
    requests.map(async (send) => {
      const res = await send();
      await res.arrayBuffer();
      if (res.status === 200) {
        tally.answered++;
        tally.spent += Number(res.headers.get("x-litellm-response-cost") ?? 0);
      } else tally.refused.set(res.status, (tally.refused.get(res.status) ?? 0) + 1);
    }),
  );
  return tally;
}

function report(name: string, tally: Tally): void {
  const refused = [...tally.refused].map(([status, n]) => `${n}× ${status}`).join(", ") || "none";
  const verdict =
    tally.spent <= budget + 1e-9 ? "within the budget" : `OVERSPENT by $${(tally.spent - budget).toFixed(6)}`;
  say(
    `${name}: ${tally.answered} answered, refused ${refused}; spent $${tally.spent.toFixed(6)} of $${budget} (${verdict})`,
  );
}

const chat = (origin: string, key: string, body: unknown, init: RequestInit = {}) =>
  fetch(`${origin}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...init,
  });

try {
  const upstream = spawnService("upstream", { entry: "bench/upstream.ts", env: { ...process.env } });
  services.push(upstream);
  const up = await readyLine<{ ready: true; url: string; port: number }>(upstream);
  database = await createBenchDatabase(String(flags.postgres));
  const config = writeConfig(up.url);
  const a = await startGateway("gateway-a", config);
  const b = await startGateway("gateway-b", config);
  say(
    `two gateways (${a}, ${b}) on database ${new URL(database.url).pathname.slice(1)} and Redis; $${price}/token`,
  );

  if (attacks.has("chunked")) {
    const key = await newKey(a, budget);
    // The fake answers with an echo of the last user message: a short answer, as max_tokens 1 asks.
    const json = JSON.stringify({
      model: "attacked",
      messages: [
        { role: "system", content: "lorem ipsum ".repeat(334) },
        { role: "user", content: "hi" },
      ],
      max_tokens: 1,
    });
    const n = Number(flags["chunked-calls"]);
    report(
      `chunked (${n} concurrent, no content-length)`,
      await fire(Array.from({ length: n }, () => () => chat(a, key, undefined, chunkedBody(json)))),
    );
  }

  if (attacks.has("burst")) {
    const key = await newKey(a, budget);
    const n = Number(flags["burst-calls"]);
    const origins = [a, b];
    report(
      `burst (${n} at once over two instances)`,
      await fire(
        Array.from(
          { length: n },
          (_, i) => () =>
            chat(origins[i % 2]!, key, {
              model: "attacked",
              messages: [{ role: "user", content: `question ${i} ${"x".repeat(20)}` }],
              max_tokens: 10,
            }),
        ),
      ),
    );
  }

  // How each instance's limits fared: shared or degraded, and Redis calls that failed (timeouts included).
  for (const [name, origin] of [
    ["a", a],
    ["b", b],
  ] as const) {
    const text = await (await fetch(`${origin}/metrics`)).text();
    const lines = text.split("\n").filter((l) => /^(gateway_limits_shared|litellm_redis_fails)\b/.test(l));
    say(`instance ${name}: ${lines.join("; ") || "no Redis failures"}`);
  }

  if (attacks.has("metrics")) {
    const key = await newKey(a, 1000);
    const size = async () => (await (await fetch(`${a}/metrics`)).text()).length;
    await fire([() => chat(a, key, { model: "attacked", messages: [{ role: "user", content: "hi" }] })]);
    const before = await size();
    const n = Number(flags["unknown-models"]);
    for (let i = 0; i < n; i += 200) {
      await fire(
        Array.from(
          { length: Math.min(200, n - i) },
          (_, j) => () =>
            chat(a, key, { model: `made-up-${i + j}`, messages: [{ role: "user", content: "hi" }] }),
        ),
      );
    }
    const after = await size();
    say(
      `metrics (${n} unknown model names): /metrics ${(before / 1024).toFixed(1)} KiB → ${(after / 1024).toFixed(1)} KiB`,
    );
  }
} finally {
  for (const s of services) if (s.output().includes("DEBUG")) say(`${s.name}: ${s.output()}`);
  await Promise.all(services.map((s) => s.stop(5000)));
  await database?.drop();
}
