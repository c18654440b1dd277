/**
 * The size limit of a tool's result (`max_result_bytes` of its server, default 1 MiB, `config/mcp-servers.ts`):
 * a result whose JSON is larger is cut before it reaches the caller (or the output guard). Its content items are
 * kept in order while they fit (a text item is cut at the limit; another item that does not fit is left out),
 * `structuredContent` is dropped, a last text item says what happened, and the result is marked `isError: true`
 * (the caller did not get the whole result; a client then does not expect the tool's `outputSchema` either).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

/** The marker that ends a cut result. */
export function truncationMarker(size: number, limit: number, server: string): string {
  return `[Truncated by the gateway: the tool's result was ${size} bytes, over the limit of ${limit} bytes of MCP server ${server} (max_result_bytes).]`;
}

/**
 * `result` as it came when its JSON fits in `limit` bytes, else the cut result described in the module comment.
 * @returns the result and whether it was cut.
 */
export function limitResultSize(
  result: CallToolResult,
  limit: number,
  server: string,
): { result: CallToolResult; truncated: boolean } {
  const size = bytes(result);
  if (size <= limit) return { result, truncated: false };
  const marker = { type: "text" as const, text: truncationMarker(size, limit, server) };
  let room = limit - bytes(marker) - 64;
  const content: CallToolResult["content"] = [];
  for (const item of result.content ?? []) {
    if (room <= 0) break;
    const itemBytes = bytes(item);
    if (itemBytes <= room) {
      content.push(item);
      room -= itemBytes;
    } else if (item.type === "text") {
      const cut = Buffer.from(item.text, "utf8")
        .subarray(0, Math.max(0, room - 32))
        .toString("utf8");
      // A character cut in two decodes as U+FFFD: drop it.
      content.push({ ...item, text: cut.replace(/\uFFFD$/, "") });
      room = 0;
    }
  }
  content.push(marker);
  return { result: { content, isError: true }, truncated: true };
}
