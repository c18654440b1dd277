/** The flags of `npm run bench` (bench/run.ts): usage text, parsing and the settings they give. */
import { parseArgs } from "node:util";
import type { ScalingSettings } from "./results.js";

export const usage = `Usage: npm run bench -- [flags]

  --duration <s>          seconds per fixed-rate run and round (default 5)
  --rates <list>          fixed rates in req/s (default 500,1000)
  --saturation <s>        seconds per saturation run and round (default 5)
  --rounds <n>            rounds of the fixed-rate and saturation runs, targets interleaved in a
                          rotating order; medians are reported (default 3)
  --connections <n>       autocannon connections at saturation (default 32)
  --warmup <s>            closed-loop warm-up per target before measuring (default 3)
  --stream-requests <n>   sequential streamed requests per target (default 100)
  --stream-concurrency <n> concurrent streams per wave, 4 waves (default 16)
  --chunk-delay <ms>      upstream delay between streamed chunks (default 2)
  --no-autocannon-rate    skip the autocannon overallRate runs
  --soak <s>              after the rest, load the gateway for <s> seconds at --soak-rate, sampling RSS
                          every 30 s (the target's soak is 600; default 0)
  --soak-rate <n>         req/s during the soak (default 1000)
  --no-full               leave out (d), the gateway's full pipeline (then the targets are judged on (c));
                          (d) gets a fresh Postgres database (DATABASE_URL, dropped at the end), Redis
                          (REDIS_URL, its own GATEWAY_REDIS_KEY_PREFIX) and a virtual key from POST /key/generate
  --baseline <dir>        another checkout of this repository whose gateway is built
                          (<dir>/services/gateway/dist/server.js), e.g. the code before a change: runs as
                          (e) gateway-full-before, the same full pipeline with its own database, key prefix
                          and virtual key, in the same rounds; before and after side by side (default: none)
  --baseline-node <path>  the node binary that runs (e) (default: the one running the benchmark), e.g. to put
                          two Node versions side by side: --baseline . --baseline-node /usr/bin/node
  --no-portkey            leave out (f) portkey, Portkey's open-source gateway (@portkey-ai/gateway, a
                          devDependency) routing to the same upstream: the peer in the throughput row
  --postgres <url>        admin URL for (d) (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis <url>           REDIS_URL for (d) (default redis://127.0.0.1:6379)
  --from-source           run the gateways from TypeScript through tsx (npm run dev) instead of building
                          services/gateway first and running dist/server.js (npm start, the image's CMD)
  --gateway-node-flags=<flags>
                          extra node flags for the gateways only, e.g. --gateway-node-flags=--max-semi-space-size=32
  --profile               run the gateways and the pass-through proxy under node --cpu-prof (profiles in
                          $TMPDIR/gateway-bench-profiles) and summarise where their time goes

 How cost grows (after the soak; the full-pipeline gateways beside the upstream and the pass-through):
  --no-scaling            leave out all of the scaling tables below
  --prompt-sizes <list>   prompt sizes in bytes (default 1000,100000,1000000); --no-sizes leaves them out
  --key-counts <list>     distinct keys in use (default 1,1000,100000), inserted into the gateways' databases
                          and warmed; --no-keys leaves them out
  --long-streams <n>      long streams per target (default 16; 0 leaves them out)
  --long-stream-chunks <n> chunks per long stream (default 1000)
  --long-stream-concurrency <n> long streams at a time (default 8)
  --workers <list>        GATEWAY_WORKERS values for the workers table (default 1,2); --no-workers leaves it out
  --scaling-seconds <s>   seconds of each scaling saturation and fixed-rate run (default 5)
  --scaling-rate <n>      fixed rate of the scaling latency runs, req/s (default 500; big prompts use less)

  --output <file>         results file (default bench/RESULTS.md)
  --help
`;

const options = {
  duration: { type: "string", default: "5" },
  rates: { type: "string", default: "500,1000" },
  saturation: { type: "string", default: "5" },
  rounds: { type: "string", default: "3" },
  connections: { type: "string", default: "32" },
  warmup: { type: "string", default: "3" },
  "stream-requests": { type: "string", default: "100" },
  "stream-concurrency": { type: "string", default: "16" },
  "chunk-delay": { type: "string", default: "2" },
  "no-autocannon-rate": { type: "boolean", default: false },
  soak: { type: "string", default: "0" },
  "soak-rate": { type: "string", default: "1000" },
  "no-full": { type: "boolean", default: false },
  "no-portkey": { type: "boolean", default: false },
  baseline: { type: "string", default: "" },
  "baseline-node": { type: "string", default: "" },
  postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
  redis: { type: "string", default: "redis://127.0.0.1:6379" },
  "gateway-node-flags": { type: "string", default: "" },
  "from-source": { type: "boolean", default: false },
  profile: { type: "boolean", default: false },
  "no-scaling": { type: "boolean", default: false },
  "prompt-sizes": { type: "string", default: "1000,100000,1000000" },
  "no-sizes": { type: "boolean", default: false },
  "key-counts": { type: "string", default: "1,1000,100000" },
  "no-keys": { type: "boolean", default: false },
  "long-streams": { type: "string", default: "16" },
  "long-stream-chunks": { type: "string", default: "1000" },
  "long-stream-concurrency": { type: "string", default: "8" },
  workers: { type: "string", default: "1,2" },
  "no-workers": { type: "boolean", default: false },
  "scaling-seconds": { type: "string", default: "5" },
  "scaling-rate": { type: "string", default: "500" },
  output: { type: "string", default: "bench/RESULTS.md" },
  help: { type: "boolean", default: false },
} as const;

/**
 * Parses `argv` (without node and the script). Prints the usage and exits with 0 for `--help`, with 2 for a bad
 * number or list.
 */
export function parseFlags(argv: string[]) {
  const { values: flags } = parseArgs({ args: argv, options, allowPositionals: false });
  if (flags.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n\n${usage}`);
    process.exit(2);
  };
  /** A number flag ≥ `min`. */
  const num = (name: keyof typeof flags, min = 0): number => {
    const value = Number(flags[name]);
    if (!Number.isFinite(value) || value < min) fail(`--${name} must be a number ≥ ${min}`);
    return value;
  };
  /** A comma-separated list of positive numbers (empty when `off`). */
  const list = (name: keyof typeof flags, off = false): number[] => {
    if (off) return [];
    const values = String(flags[name])
      .split(",")
      .filter((v) => v.trim() !== "")
      .map(Number);
    if (values.some((v) => !Number.isInteger(v) || v <= 0))
      fail(`--${name} must list positive whole numbers`);
    return values;
  };
  const noScaling = flags["no-scaling"];
  const settings = {
    duration: num("duration", 1),
    rates: list("rates"),
    saturation: num("saturation", 1),
    rounds: num("rounds", 1),
    connections: num("connections", 1),
    warmup: num("warmup"),
    streamRequests: num("stream-requests"),
    streamConcurrency: num("stream-concurrency", 1),
    chunkDelay: num("chunk-delay"),
    soak: num("soak"),
    soakRate: num("soak-rate", 1),
  };
  const scaling: ScalingSettings = {
    promptSizes: list("prompt-sizes", noScaling || flags["no-sizes"]),
    keyCounts: [...new Set(list("key-counts", noScaling || flags["no-keys"]))].sort((a, b) => a - b),
    longStreams: noScaling ? 0 : num("long-streams"),
    longStreamChunks: num("long-stream-chunks", 3),
    longStreamConcurrency: num("long-stream-concurrency", 1),
    workers: list("workers", noScaling || flags["no-workers"]),
    seconds: num("scaling-seconds", 1),
    rate: num("scaling-rate", 1),
    connections: settings.connections,
    rounds: settings.rounds,
  };
  return { flags, settings, scaling };
}
