/**
 * The spend spool: spend rows Postgres has not taken yet, kept on local disk so they survive the process
 * (SIGTERM during a database outage, a crash, a restart). One folder per database (`<dir>/<host_port_db>/`, so
 * rows are only ever replayed into the database they were meant for); in it, append-only segment files
 * `spend-<pid>-<process id>-<n>.jsonl` with one {@link SpendLogRow} as JSON per line, each append written
 * and fsync'd as one batch.
 *
 * The recorder spools every row it still holds once a write to Postgres has failed, and all of them at
 * shutdown; it deletes a segment once every row in it is written. At start, segments left by earlier processes
 * are read back ({@link SpendSpool.replay}) and written like new rows; the writes are idempotent by
 * `request_id`, so a row both written and still spooled (a crash between the two) counts once.
 *
 * A folder belongs to one running gateway: segments of another live process on the same host (by pid) are
 * left alone, but two gateways on different hosts must not share a folder. The workers of one gateway
 * (GATEWAY_WORKERS > 1) share its folder, each writing its own segments; at start each worker claims a dead
 * process's segment by renaming it to a segment of its own before reading it, so two workers starting together
 * never replay the same segment, and a segment claimed by a worker that then dies is replayed by the next start.
 */
import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { SpendLogRow } from "./types.js";

const SEGMENT = /^spend-(\d+)-([0-9a-f-]+)-(\d+)\.jsonl$/;

/** Rows read back from one segment of an earlier process. */
export interface SpooledSegment {
  /** File name inside {@link SpendSpool.dir}. */
  file: string;
  rows: SpendLogRow[];
}

/** Is `pid` a running process other than this one? */
function isOtherLiveProcess(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The folder name of a database, from `host:port/database` (no credentials). */
export function spoolFolderName(database: string): string {
  return database.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** Append-only segment files of spend rows; see the module comment. File operations run one at a time. */
export class SpendSpool {
  private readonly processId = randomUUID();
  private sequence = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private created = false;

  /**
   * @param dir the folder of this database's segments (created on first use).
   * @param log receives failures (warn/error); never row contents.
   */
  constructor(
    readonly dir: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** A new segment name of this process (the recorder appends to it until it rotates). */
  newSegment(): string {
    this.sequence += 1;
    return `spend-${process.pid}-${this.processId}-${this.sequence}.jsonl`;
  }

  /**
   * Appends `rows` to `segment` and fsyncs it.
   * @throws the file system's error (full disk, no permission); the rows then stay in memory only.
   */
  append(segment: string, rows: SpendLogRow[]): Promise<void> {
    const data = `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`;
    return this.serial(async () => {
      await this.ensureDir();
      const file = await open(join(this.dir, segment), "a");
      try {
        await file.writeFile(data);
        await file.datasync();
      } finally {
        await file.close();
      }
    });
  }

  /** Deletes a segment whose rows are all written. Never throws (a failure is logged; replay is idempotent). */
  release(segment: string): Promise<void> {
    return this.serial(async () => {
      await unlink(join(this.dir, segment)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") {
          this.log.warn(
            { file: segment, err: error.message },
            "spend spool: cannot delete a written segment",
          );
        }
      });
    });
  }

  /** Resolves once every append and delete asked for so far is done. */
  settled(): Promise<void> {
    return this.serial(async () => undefined);
  }

  /**
   * Claims and reads the segments left by earlier processes, oldest first: each is renamed to a segment of this
   * process (the returned {@link SpooledSegment.file}), so another process replaying the same folder at the same
   * time skips it. Lines that do not parse (a write cut by a crash) are skipped and counted in the log.
   */
  async replay(): Promise<SpooledSegment[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const segments: Array<SpooledSegment & { order: [number, number] }> = [];
    let unreadable = 0;
    for (const name of names) {
      const match = SEGMENT.exec(name);
      if (match === null) continue;
      const pid = Number(match[1]);
      if (isOtherLiveProcess(pid)) {
        this.log.warn({ file: name, pid }, "spend spool: segment of a running process left alone");
        continue;
      }
      const claimed = this.newSegment();
      try {
        await rename(join(this.dir, name), join(this.dir, claimed));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // another process claimed it
        throw error;
      }
      const rows: SpendLogRow[] = [];
      for (const line of (await readFile(join(this.dir, claimed), "utf8")).split("\n")) {
        if (line === "") continue;
        try {
          rows.push(JSON.parse(line) as SpendLogRow);
        } catch {
          unreadable += 1;
        }
      }
      segments.push({ file: claimed, rows, order: [pid, Number(match[3])] });
    }
    if (unreadable > 0) {
      this.log.warn({ lines: unreadable, dir: this.dir }, "spend spool: unreadable lines skipped");
    }
    return segments.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
  }

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.chain.then(operation);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async ensureDir(): Promise<void> {
    if (this.created) return;
    await mkdir(this.dir, { recursive: true });
    this.created = true;
  }
}
