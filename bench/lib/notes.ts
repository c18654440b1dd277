/** The "How to read this" section of RESULTS.md: what every table measures and how. */
import { scalingNotes } from "./scaling-report.js";

export const notes = `## How to read this

- (a) **upstream**: the contract fake of an OpenAI-compatible server (test/fixtures/openai-upstream.ts) called
  directly; (b) **passthrough**: bench/passthrough.ts, node:http + an undici Pool forwarding bytes, no parsing;
  (c) **gateway**: services/gateway, built, with the master key only (no database, limits in process);
  (d) **gateway-full**: the same code with the full pipeline the targets assume, a virtual key from
  \`POST /key/generate\` (cached key lookup), rpm/tpm and budget admission and settlement in Redis, batched spend
  rows in Postgres, metrics. The targets are judged on (d). With \`--baseline <dir>\`, (e)
  **gateway-full-before** is the same full pipeline built from another checkout (\`<dir>\`, the code before the
  change; its commit is in the list above), with its own database, Redis key prefix and virtual key, run in the
  same rotating rounds as the others: before and after from one run, side by side in the targets table.
  (f) **portkey**: the peer, Portkey's open-source gateway (\`@portkey-ai/gateway\` from npm, its
  \`start-server\` bin, \`--no-portkey\` leaves it out) routing to the same upstream by its
  \`x-portkey-provider: openai\` and \`x-portkey-custom-host\` headers, no keys, limits or spend records of its
  own; the throughput row gives the judged gateway's req/s as a share of the bare proxy's and of Portkey's.
  It is not in the streaming table: version 1.15.2 answers streams with 500 on Node 20 (bench/lib/portkey.ts).
  Each runs in its own process; the load generators run in the benchmark's process; all share this machine's
  two cores with Redis and Postgres, so a request through (d) costs CPU in five processes (see the CPU table).
  The gateways run with GATEWAY_WORKERS=1 (one process each) except in the workers table.
- **Added latency** is the gateway's (or proxy's) percentile minus the upstream's at the same rate: a
  difference of percentiles, not a percentile of differences.
- **Fixed rates, open loop** (judged): request *i* is issued at t0 + i/rate by a timer whether or not earlier
  ones have answered, on an undici Pool; latency runs from issuing (including any wait for a pooled
  connection) to the last byte, so a slow server cannot hide its slowness by slowing the generator down
  (coordinated omission). "generator lag" is how late the timer issued requests; it bounds the precision.
- **autocannon \`overallRate\`**: autocannon is a closed-loop tool; with \`overallRate\` each connection sends its
  share of the second back to back and then waits for the next one-second tick (lib/httpClient.js,
  \`reqsMadeThisSecond\`), so the load arrives in bursts at the start of every second, and each connection
  waits for its previous answer before sending (coordinated omission). Its figures are shown for
  comparison with other autocannon numbers, not judged.
- **Saturation**: autocannon, closed loop, fixed connection count; req/s counts 2xx answers only.
- **Streaming**: \`stream: true\` requests; time from issuing to the first SSE byte at the client, one at a time
  on a kept-alive connection, then in concurrent waves. The upstream waits between chunks
  (--chunk-delay), so a proxy that buffered a stream would show a TTFT close to the stream's total.
- **RSS flat** (soak, \`--soak 600\`): the judged gateway under the soak rate for the whole time, VmRSS sampled
  every 30 s; flat means the least-squares line through the samples after the first minute rises by at most
  5 % of their mean (or 10 MiB) over the soak. (A garbage-collected heap swings by tens of MiB between two
  samples; comparing the first and last sample alone lets one swing decide.)
${scalingNotes}- **RSS**: VmRSS/VmHWM of the gateway's own process (plus its worker processes' if it has any; the peaks are
  then summed per process). The gateways run as \`npm start\` and the image do
  (\`node services/gateway/dist/server.js\`, built first), or from TypeScript with \`--from-source\`
  (\`node --import tsx\`, not through the \`tsx\` wrapper), so the pid is the gateway's.
`;
