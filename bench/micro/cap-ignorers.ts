/**
 * Micro-benchmark of what the cap-ignorer check adds to a JSON call's hot path
 * (`npx tsx --conditions=development bench/micro/cap-ignorers.ts`): `CapIgnorers.ignores()`, asked once per
 * upstream attempt of a non-streamed chat or text completion (`router/router.ts`), three rounds, in the three
 * states a gateway can be in: no deployment marked (the common case: one property read, one size check), another
 * deployment marked (a map lookup and a clock read), the deployment itself marked. No I/O: marks arrive by the
 * invalidation bus and a 30 s read-back, never per call. Prints ns per call.
 */
import type { Deployment } from "../../services/gateway/src/config/types.js";
import { CapIgnorers } from "../../services/gateway/src/router/cap-ignorers.js";
import { systemClock } from "../../services/gateway/src/time/clock.js";

const deployment = (id: string): Deployment => ({
  id,
  modelName: "general",
  provider: "openai",
  upstreamModel: "llama-3.1-70b",
  apiBase: "http://vllm:8000/v1",
  tags: [],
  created: 0,
});
const plain = deployment("vllm-1");
const other = deployment("vllm-2");

function perCall(f: () => unknown, n: number): number {
  for (let i = 0; i < n / 10; i++) f();
  const started = process.hrtime.bigint();
  let hits = 0;
  for (let i = 0; i < n; i++) if (f()) hits++;
  const ns = Number(process.hrtime.bigint() - started) / n;
  if (hits < 0) console.log(hits); // keeps the result alive
  return ns;
}

const none = new CapIgnorers({ clock: systemClock, deployments: [plain, other] });
const someoneElse = new CapIgnorers({ clock: systemClock, deployments: [plain, other] });
await someoneElse.mark(other);
const itself = new CapIgnorers({ clock: systemClock, deployments: [plain, other] });
await itself.mark(plain);

const n = 5_000_000;
console.log("round | none marked ns | another marked ns | itself marked ns");
for (let round = 1; round <= 3; round++) {
  const a = perCall(() => none.ignores(plain), n);
  const b = perCall(() => someoneElse.ignores(plain), n);
  const c = perCall(() => itself.ignores(plain), n);
  console.log(`${round} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${c.toFixed(1)}`);
}
