/**
 * What the gateway knows about one upstream API family, in one place per provider
 * (`providers/<provider>/index.ts`): its name, where its public API lives, which environment variable holds
 * its key and how to call it (list prices come from the price catalogue, `cost/list-prices.ts`). One adapter per family behind one small interface (the
 * layout of Portkey's gateway): the router asks the deployment's adapter how to call it, then sends the
 * request itself.
 */
import type { Dispatcher } from "undici";
import type { Deployment, ProviderName } from "../config/types.js";

/** An HTTP request to an upstream, ready for undici. */
export interface UpstreamRequest {
  /** Scheme, host and port, e.g. `https://api.openai.com`. */
  origin: string;
  /** Path with any base path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** JSON body. */
  body: string;
  /**
   * Rewrites a 2xx answer into the API the caller sent (set by an adapter that translated the request, e.g.
   * Anthropic's Messages answer into a `chat.completion` or its events into `chat.completion.chunk` SSE): the
   * router applies it before anyone reads the body. Absent: the answer is passed on as it came.
   */
  translateAnswer?: (answer: UpstreamAnswer) => UpstreamAnswer;
}

/** A 2xx upstream answer whose body has not been read yet (undici's response parts). */
export interface UpstreamAnswer {
  statusCode: number;
  headers: Dispatcher.ResponseData["headers"];
  body: Dispatcher.ResponseData["body"];
}

/**
 * An upstream API a provider may serve, named by its path under the API base (OpenAI's and Anthropic's API
 * references): the pipeline's endpoints send to one of these, natively or after translating.
 */
export type UpstreamApi =
  | "chat/completions"
  | "embeddings"
  | "completions"
  | "responses"
  | "messages"
  | "messages/count_tokens";

/** Builds upstream calls for one provider. */
export interface ProviderAdapter {
  readonly provider: ProviderName;
  /**
   * Whether `deployment` serves `api` natively (an endpoint that gets `false` translates to an API it does
   * serve, chat completions as a rule).
   */
  serves(deployment: Deployment, api: UpstreamApi): boolean;
  /**
   * Builds the upstream call for `api` (one it {@link serves}).
   * @param json the request's JSON text in that API's format, `model` already set to the deployment's upstream
   *   model.
   */
  request(api: UpstreamApi, deployment: Deployment, json: string): UpstreamRequest;
  /**
   * The message of a failed call's error body in this provider's format (e.g. Anthropic's
   * `{type:"error", error:{type, message}}`), or undefined to let the router read it as OpenAI's
   * `{error:{message}}` (router/upstream-error.ts).
   */
  errorMessage?(text: string): string | undefined;
}

/** The facts of one provider. */
export interface ProviderFacts {
  /** The `litellm_params.model` prefix, e.g. `openai` in `openai/gpt-4o`. */
  name: ProviderName;
  /** Base URL used when an entry has no `api_base` (ends before `/chat/completions`, no trailing slash). */
  defaultApiBase: string;
  /** Environment variable holding the key for the public API (LiteLLM's convention), e.g. OPENAI_API_KEY. */
  keyEnv: string;
  /** How to call it. */
  adapter: ProviderAdapter;
}
