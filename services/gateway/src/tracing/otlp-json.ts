/**
 * OTLP/HTTP JSON text, written straight from plain values (no OpenTelemetry SDK span objects): the
 * `ExportTraceServiceRequest` of opentelemetry-proto (`opentelemetry/proto/collector/trace/v1`) in the JSON
 * encoding the OpenTelemetry JS exporter sends (otlp-transformer's JSON encoder): hex trace and span ids,
 * nanosecond timestamps as decimal strings, attributes as `{key, value: {stringValue|intValue|doubleValue|
 * boolValue|arrayValue}}`, integers as JSON numbers. A span is written once, as text, when its call ends; a
 * request body is those texts joined (`exportRequest`), so an export serialises nothing again.
 */

/** An attribute value as OpenTelemetry's API accepts it. */
export type AttributeValue = string | number | boolean | readonly string[];

/** `attributes` of a span under construction: JSON text of `{key, value}` entries, comma-separated. */
export class AttributeList {
  private text = "";

  /** Adds an attribute; `undefined` and `null` are left out (as the SDK's `setAttribute` does). */
  add(key: string, value: AttributeValue | undefined | null): this {
    if (value === undefined || value === null) return this;
    this.entry(key, anyValue(value));
    return this;
  }

  /**
   * Adds a string attribute whose value is already JSON text of a string (`JSON.stringify(text)`), so a long
   * text carried by several attributes or spans is escaped once.
   */
  addQuoted(key: string, quoted: string | undefined): this {
    if (quoted === undefined) return this;
    this.entry(key, `{"stringValue":${quoted}}`);
    return this;
  }

  /** The list as JSON text, with its brackets. */
  toJSON(): string {
    return `[${this.text}]`;
  }

  private entry(key: string, value: string): void {
    const item = `{"key":${JSON.stringify(key)},"value":${value}}`;
    this.text = this.text === "" ? item : `${this.text},${item}`;
  }
}

function anyValue(value: AttributeValue): string {
  if (typeof value === "string") return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === "number") {
    // Like the JSON encoder: integers as intValue (a JSON number), the rest as doubleValue.
    return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${JSON.stringify(value)}}`;
  }
  if (typeof value === "boolean") return `{"boolValue":${value}}`;
  return `{"arrayValue":{"values":[${value.map((v) => anyValue(v)).join(",")}]}}`;
}

/** What one span is written from. Times are epoch ms (truncated to whole ms, as a `Date` start/end is). */
export interface SpanFacts {
  /** 32 lowercase hex characters. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: AttributeList;
  /** Set for a failed span: status ERROR with this message; absent: status UNSET. */
  errorMessage?: string;
}

/** JSON text of one OTLP span (kind INTERNAL, sampled, no events or links). */
export function spanJson(span: SpanFacts): string {
  const start = Math.trunc(span.startMs);
  // The SDK ends a span that would end before its start at its start.
  const end = Math.max(start, Math.trunc(span.endMs));
  const parent = span.parentSpanId === undefined ? "" : `"parentSpanId":"${span.parentSpanId}",`;
  const status =
    span.errorMessage === undefined
      ? `{"code":0}`
      : `{"code":2,"message":${JSON.stringify(span.errorMessage)}}`;
  return (
    `{"traceId":"${span.traceId}","spanId":"${span.spanId}",${parent}"name":${JSON.stringify(span.name)},` +
    `"kind":1,"startTimeUnixNano":"${nanos(start)}","endTimeUnixNano":"${nanos(end)}",` +
    `"attributes":${span.attributes.toJSON()},"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,` +
    `"status":${status},"links":[],"droppedLinksCount":0,"flags":257}`
  );
}

/** Whole epoch ms as decimal nanoseconds. */
function nanos(ms: number): string {
  return ms === 0 ? "0" : `${ms}000000`;
}

/** A random 16-hex-digit span id (never all zeros, which OTLP reserves for "no span"). */
export function randomSpanId(): string {
  const high = (Math.random() * 0x1_0000_0000) >>> 0;
  const low = (((Math.random() * 0x1_0000_0000) >>> 0) | (high === 0 ? 1 : 0)) >>> 0;
  return high.toString(16).padStart(8, "0") + low.toString(16).padStart(8, "0");
}

/** A resource and instrumentation scope every exported span shares. */
export interface ExportScope {
  /** Resource attributes, e.g. `service.name`. */
  resource: Record<string, string>;
  /** Instrumentation scope name. */
  scope: string;
}

/** Builds the request bodies of one resource and scope: `body(spans)` joins span texts (`spanJson`) into one. */
export function exportRequest(scope: ExportScope): (spans: readonly string[]) => string {
  const resource = new AttributeList();
  for (const [key, value] of Object.entries(scope.resource)) resource.add(key, value);
  const head =
    `{"resourceSpans":[{"resource":{"attributes":${resource.toJSON()},"droppedAttributesCount":0},` +
    `"scopeSpans":[{"scope":{"name":${JSON.stringify(scope.scope)}},"spans":[`;
  return (spans) => `${head}${spans.join(",")}]}]}]}`;
}
