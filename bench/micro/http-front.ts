/**
 * What fastify itself costs a model call (`npx tsx bench/micro/http-front.ts [--seconds 4] [--rounds 3]`): the
 * lever "serve the model routes with a lean `node:http` handler in front of fastify", measured before building
 * it. Servers from `bench/micro/front-server.ts` (which describes the variants; `--fronts` picks them), each in
 * its own process: fastify with the gateway's hook set on a chat route, with and without a pino logger, and
 * `node`, a bare handler doing the same work. All answer a fixed chat completion, no
 * upstream. Each round loads each server in turn (rotating order) with autocannon (16 connections, closed loop)
 * and reads the server process's CPU time from /proc; the table gives medians of the rounds: server CPU per
 * request (µs) and requests per second. The difference is the most a lean front could save per call; compare it
 * with the full pipeline's CPU per request in `bench/RESULTS.md`.
 */
import { parseArgs } from "node:util";
import { readyLine, type Service, spawnService } from "../lib/children.js";
import { processCpuMs } from "../lib/cpu.js";
import { cannon } from "../lib/load.js";
import { median } from "../lib/stats.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    fronts: { type: "string" },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const fronts = (values.fronts ?? "fastify-pino,fastify-pino-shared,fastify,fastify-sync,node").split(",");

const services = new Map<string, { service: Service; origin: string }>();
try {
  for (const front of fronts) {
    const service = spawnService(front, {
      entry: "bench/micro/front-server.ts",
      env: { ...process.env, BENCH_FRONT: front },
    });
    const { port } = await readyLine<{ ready: true; port: number }>(service);
    services.set(front, { service, origin: `http://127.0.0.1:${port}` });
  }
  const results = new Map<string, { cpuUs: number[]; rps: number[] }>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? fronts : [...fronts].reverse();
    for (const front of order) {
      const { service, origin } = services.get(front)!;
      const target = {
        name: front,
        origin,
        path: "/v1/chat/completions",
        headers: { authorization: "Bearer sk-bench", "content-type": "application/json" },
        model: "bench",
      };
      if (round === 0) await cannon(target, { seconds: 2, connections: 16 }); // warm-up (JIT)
      const before = processCpuMs(service.pid);
      const run = await cannon(target, { seconds, connections: 16 });
      const cpuMs = processCpuMs(service.pid) - before;
      const requests = run.ok + run.non2xx;
      if (run.non2xx > 0 || run.errors > 0)
        throw new Error(`${front}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      const entry = results.get(front) ?? { cpuUs: [], rps: [] };
      results.set(front, entry);
      entry.cpuUs.push((cpuMs * 1000) / requests);
      entry.rps.push(requests / seconds);
      process.stderr.write(
        `round ${round + 1} ${front}: ${requests} requests, ${((cpuMs * 1000) / requests).toFixed(1)} µs CPU each\n`,
      );
    }
  }
  const node = median(results.get("node")!.cpuUs);
  process.stdout.write(
    `\n${rounds} rounds × ${seconds} s, medians\n\n| front | server CPU per request | − node:http | req/s |\n| --- | --- | --- | --- |\n`,
  );
  for (const front of fronts) {
    const r = results.get(front)!;
    const cpu = median(r.cpuUs);
    process.stdout.write(
      `| ${front} | ${cpu.toFixed(1)} µs | ${(cpu - node).toFixed(1)} µs | ${median(r.rps).toFixed(0)} |\n`,
    );
  }
} finally {
  for (const { service } of services.values()) await service.stop(2000);
}
