/**
 * The benchmark's results as data: every measurement module (rounds.ts, scaling.ts, run.ts's own steps) fills a
 * part of {@link BenchResults}, and the report modules (report.ts, report-sections.ts, scaling-report.ts) only
 * read it. Types only, so measuring and reporting never import each other: a new measurement is a field here,
 * the module that measures it, and the section that renders it. Units: latency ms, memory KiB, CPU ms, rates req/s.
 */
import type { GcTotals } from "./gc.js";
import type { LoadResult, PacedResult, PacedRow, StreamResult } from "./load.js";
import type { ProfileSummary } from "./profile.js";
import type { CommandCounts } from "./redis-commands.js";
import type { Summary } from "./stats.js";

/** The load runs' own result shapes, re-exported so the report reads every type from here. */
export type { LoadResult, PacedResult, PacedRow, StreamResult };

/** Memory of a gateway process, KiB. */
export interface RssSample {
  /** The gateway target it was read from (`gateway`, `gateway-full`). */
  process: string;
  label: string;
  rss: number;
  peak: number;
}

/** One run of `npm run bench`: what RESULTS.md is written from. */
export interface BenchResults {
  date: string;
  machine: { nproc: number; cpu: string; memGiB: number; node: string; os: string };
  /** 1-minute load average when the run started and when it ended (other work on a shared machine). */
  loadAverage: [number, number];
  command: string;
  /** The gateway targets of this run, in order, each with what it runs (master key only, or the full pipeline). */
  gateways: Array<{ name: string; mode: string }>;
  /** The gateway target the targets are judged on (the full pipeline when it ran). */
  judged: string;
  settings: Record<string, string | number | boolean>;
  /** Open-loop fixed-rate runs, merged over rounds. */
  paced: PacedRow[];
  autocannonRate: Array<LoadResult & { rate: number }>;
  saturation: Array<{ target: string; rounds: number[]; rps: number; errors: number; latency: Summary }>;
  streams: StreamResult[];
  rss: RssSample[];
  /** GC pauses of each gateway during its fixed-rate rounds (all rounds of one rate summed), from its /metrics. */
  gc: Array<{ target: string; rate: number; seconds: number; kinds: GcTotals }>;
  /**
   * CPU ms each process used during each target's saturation rounds, and the requests answered in them; with
   * `redis`, the Redis commands (calls per command, INFO commandstats) sent in those rounds.
   */
  cpu: Array<{ target: string; requests: number; ms: Record<string, number>; redis?: CommandCounts }>;
  /** RSS of the judged gateway during the soak, `[seconds since start, KiB]`. */
  soak: Array<[number, number]>;
  /** CPU profiles (`--profile`) of the gateways and of the pass-through proxy, for comparison. */
  profiles?: Array<{ process: string; file: string; summary: ProfileSummary; requests: number }>;
  /** The scaling tables' measurements (left out with `--no-scaling`). */
  scaling?: ScalingResults;
  /** Wall time of the run's parts, seconds, in order. */
  phases?: Array<[string, number]>;
  seconds: number;
}

/** What the scaling parts run; an empty list (or 0) leaves a part out. */
export interface ScalingSettings {
  /** Prompt sizes, bytes of text in the request (1 KB, 100 KB, 1 MB). */
  promptSizes: number[];
  /** Distinct keys in use (1, 1,000, 100,000), ascending. */
  keyCounts: number[];
  /** Long streams per target (0: none), `longStreamConcurrency` at a time, each `longStreamChunks` content chunks. */
  longStreams: number;
  longStreamChunks: number;
  longStreamConcurrency: number;
  /** GATEWAY_WORKERS values to compare (1, 2). */
  workers: number[];
  /** Seconds of each saturation and fixed-rate run. */
  seconds: number;
  /** The modest fixed rate of the added-latency runs, req/s (big prompts use less, see scaling.ts `rateFor`). */
  rate: number;
  /** Saturation connections for small requests (big ones use fewer, see scaling.ts `connectionsFor`). */
  connections: number;
  /** Rounds of the workers comparison (medians reported). */
  rounds: number;
}

/** One target's figures in one scaling step: saturation, and the fixed-rate run when there was one. */
export interface ScaleRow {
  target: string;
  saturation: LoadResult;
  paced?: PacedResult;
  /** CPU ms per meter over the saturation run, and the requests answered in it. */
  cpu: { requests: number; ms: Record<string, number> };
}

export interface SizeStep {
  bytes: number;
  connections: number;
  rate: number;
  rows: ScaleRow[];
}

export interface KeyStep {
  keys: number;
  rows: ScaleRow[];
  /** Each full gateway's memory once `keys` keys were warmed: VmRSS KiB, V8 heap used bytes. */
  memory: Array<{ target: string; rssKiB: number; heapBytes: number }>;
}

export interface LongStreamRow {
  target: string;
  ttft: Summary;
  total: Summary;
  failures: number;
  streams: number;
  /** CPU ms per meter over all of the target's long streams. */
  cpuMs: Record<string, number>;
}

export interface WorkersRow {
  target: string;
  workers: number;
  /** Processes seen in the gateway's tree (1 + its descendants) after start. */
  processes: number;
  rounds: number[];
  rps: number;
  latency: Summary;
  cpu: { requests: number; ms: number };
}

export interface ScalingResults {
  settings: ScalingSettings;
  sizes: SizeStep[];
  keys: KeyStep[];
  longStreams?: { chunks: number; concurrency: number; rows: LongStreamRow[] };
  workers: WorkersRow[];
}
