/**
 * Token usage in chat completions' names (OpenAI API reference, the `usage` object), the shape every endpoint's
 * and provider's usage is read into, and its normalised breakdown by how each part is billed
 * ({@link UsageBreakdown}). No imports: providers, the pipeline and accounting all use it. The readers of the
 * providers' usage objects are in `provider-usage.ts`.
 */

/** OpenAI `usage`, tokens. */
export interface Usage {
  /** Every input token: uncached, read from and written to the prompt cache. */
  prompt_tokens: number;
  /** Every output token, reasoning and audio included. */
  completion_tokens: number;
  total_tokens: number;
  /** How the tokens divide by price, when the upstream reported usage; absent for the gateway's estimates. */
  breakdown?: UsageBreakdown;
}

/**
 * One call's usage divided by how providers bill it, tokens (requests for `web_search_requests`), whatever API it
 * came from. Parts never overlap on the input side: `input + cache_read + cache_write_5m + cache_write_1h` is
 * `prompt_tokens`; `output` is `completion_tokens`, and `output_reasoning` and `output_audio` are parts of it
 * (never counted twice). Sources:
 *
 * - OpenAI chat completions and completions: `prompt_tokens_details.{cached_tokens, audio_tokens}`,
 *   `completion_tokens_details.{reasoning_tokens, audio_tokens, accepted_prediction_tokens,
 *   rejected_prediction_tokens}`; `prompt_tokens` includes `cached_tokens` (OpenAI API reference, the chat
 *   completion object's `usage`);
 * - OpenAI Responses: `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`;
 *   `input_tokens` includes the cached ones (OpenAI API reference, the response object's `usage`);
 * - Anthropic Messages: `input_tokens` (after the last cache breakpoint: neither read nor written),
 *   `cache_creation_input_tokens` (split by `cache_creation.ephemeral_5m_input_tokens` /
 *   `ephemeral_1h_input_tokens`), `cache_read_input_tokens`, `output_tokens`,
 *   `server_tool_use.web_search_requests` (Anthropic API reference, Messages, `usage`; "Prompt caching").
 */
export interface UsageBreakdown {
  /** Input tokens neither read from nor written to the prompt cache (billed at the input price). */
  input: number;
  /** Of `input`, audio tokens. */
  input_audio: number;
  /** Input tokens read from the prompt cache (cache hits). */
  cache_read: number;
  /** Input tokens written to the prompt cache with the 5-minute lifetime (Anthropic's default). */
  cache_write_5m: number;
  /** Input tokens written to the prompt cache with the 1-hour lifetime. */
  cache_write_1h: number;
  /** Every output token (`completion_tokens`). */
  output: number;
  /** Of `output`, reasoning (thinking) tokens. */
  output_reasoning: number;
  /** Of `output`, audio tokens. */
  output_audio: number;
  /** Of `output`, predicted-output tokens that appeared in the completion (OpenAI Predicted Outputs). */
  accepted_prediction: number;
  /** Of `output`, predicted-output tokens that did not appear (billed as output all the same). */
  rejected_prediction: number;
  /** Server-side web searches the model ran (Anthropic's `server_tool_use.web_search_requests`), requests. */
  web_search_requests: number;
}
