/**
 * The body of a translated answer: a Transform fed by the upstream's undici body, readable the way the
 * pipeline reads an upstream body (events, async iteration, `destroy`, and undici's `text()`/`json()`).
 * Destroying it destroys the upstream body (the connection is released), and an upstream failure fails it.
 */
import { pipeline, Transform, type TransformCallback } from "node:stream";
import type { UpstreamAnswer } from "../types.js";

/** A Transform with undici's body helpers. */
interface BodyHelpers {
  text(): Promise<string>;
  json(): Promise<unknown>;
}

async function readAll(stream: Transform): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(String(part)));
  return Buffer.concat(parts).toString("utf8");
}

/** Gives `stream` the helpers of undici's body mixin that the pipeline uses. */
function withHelpers(stream: Transform): Transform & BodyHelpers {
  const helpers: BodyHelpers = {
    text: () => readAll(stream),
    json: async () => JSON.parse(await readAll(stream)),
  };
  return Object.assign(stream, helpers);
}

/**
 * `answer` with its body piped through `transform` (and `headers` replacing its headers).
 * The one cast: the pipeline types upstream bodies as undici's BodyReadable, of which this implements what it
 * reads.
 */
export function translatedAnswer(
  answer: UpstreamAnswer,
  transform: Transform,
  headers: UpstreamAnswer["headers"],
): UpstreamAnswer {
  pipeline(answer.body, transform, () => {
    // Failures reach whoever reads `transform` (pipeline destroys it with the error).
  });
  const body = withHelpers(transform) as unknown as UpstreamAnswer["body"];
  return { statusCode: answer.statusCode, headers, body };
}

/** A Transform that reads its whole input, then writes `translate(text)` once. */
export class WholeBodyTransform extends Transform {
  private readonly parts: Buffer[] = [];

  constructor(private readonly translate: (text: string) => string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.parts.push(chunk);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    try {
      callback(null, this.translate(Buffer.concat(this.parts).toString("utf8")));
    } catch (error) {
      callback(error as Error);
    }
  }
}
