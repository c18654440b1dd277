import type { Deployment } from "../../../../services/gateway/src/config/types.js";

/** A deployment of `model` (`provider/upstream model`) with `extra`, as the config loader would make it. */
export const deployment = (model: string, extra: Partial<Deployment> = {}): Deployment => {
  const [provider, ...rest] = model.split("/");
  return {
    id: model,
    modelName: model,
    provider: provider as Deployment["provider"],
    upstreamModel: rest.join("/"),
    apiBase: "http://h/v1",
    tags: [],
    created: 0,
    ...extra,
  };
};
