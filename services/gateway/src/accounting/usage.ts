/**
 * Token usage in chat completions' names (OpenAI API reference, the `usage` object), the shape every endpoint's
 * and provider's usage is read into. No imports: providers, the pipeline and accounting all use it.
 */

/** OpenAI `usage`, tokens. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
