/** The Responses API streamed through the official `openai` client, read to the end. */
import type OpenAI from "openai";

/**
 * Creates a streamed response with `client` (`params` with `stream: true` added) and reads the stream to its
 * end; its events in the order they came (`response.created` … `response.completed` for a finished one).
 * @throws what the client throws: an `APIError` for an error answer, or the stream's error event.
 */
export async function streamResponse(
  client: OpenAI,
  params: Omit<OpenAI.Responses.ResponseCreateParamsStreaming, "stream">,
): Promise<OpenAI.Responses.ResponseStreamEvent[]> {
  const stream = await client.responses.create({ ...params, stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}
