/** Server-sent event streams as a client reads them (parsed with eventsource-parser, as the gateway's relay does). */
import { createParser } from "eventsource-parser";

/**
 * The `data` of every event in `text`, a whole `text/event-stream` body, in order: for an OpenAI stream, each
 * chunk's JSON and then `[DONE]` (OpenAI API reference, "Streaming"). A partial last event (no blank line after it)
 * is not returned.
 */
export function sseData(text: string): string[] {
  const data: string[] = [];
  const parser = createParser({ onEvent: (event) => data.push(event.data) });
  parser.feed(text);
  return data;
}
