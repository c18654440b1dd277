/**
 * The chat app (LibreChat) configured by chat-app.yaml, talking to the gateway inside the network.
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { HOST_PORTS } from "./config.js";
import { httpCheck, type ServiceSpec, serviceContainer } from "./container.js";
import type { ServiceComponentArgs, ServiceFacts } from "./datastores.js";
import { readRepoFile } from "./files.js";
import { IMAGES } from "./images.js";

/** The chat's config file in the checkout (LibreChat's librechat.yaml). */
export const CHAT_CONFIG_FILE = "chat-app.yaml";
/** Where LibreChat reads it (CONFIG_PATH). */
export const CHAT_CONFIG_PATH = "/app/librechat.yaml";

/** Inputs of {@link Chat}. */
export interface ChatArgs extends ServiceComponentArgs {
  mongoUri: pulumi.Input<string>;
  dependsOn: pulumi.Resource[];
}

/** The chat's service description (both renderers). `mongoUri`: the document database the chat keeps its data in. */
export function chatSpec(base: ServiceFacts, mongoUri: pulumi.Input<string>): ServiceSpec {
  const { config, secrets } = base;
  return {
    name: "chat",
    image: { pull: config.images.librechat, tools: IMAGES.librechat.tools },
    env: {
      HOST: "0.0.0.0",
      PORT: String(HOST_PORTS.chat),
      MONGO_URI: mongoUri,
      JWT_SECRET: secrets.jwtSecret,
      JWT_REFRESH_SECRET: secrets.jwtRefreshSecret,
      CREDS_KEY: secrets.credsKey,
      CREDS_IV: secrets.credsIv,
      DOMAIN_CLIENT: config.urls.chat,
      DOMAIN_SERVER: config.urls.chat,
      ALLOW_REGISTRATION: "true",
      TRUST_PROXY: "1",
      SEARCH: "false",
      CONFIG_PATH: CHAT_CONFIG_PATH,
      // chat-app.yaml's custom endpoint reads its key from here (`apiKey: "${GATEWAY_API_KEY}"`): the chat's
      // service key, which the gateway books on the chat user each call names (never the master key).
      GATEWAY_API_KEY: secrets.chatServiceKey,
      ...(config.env.AGENTS_URL ? { AGENTS_URL: config.env.AGENTS_URL } : {}),
    },
    publish: [{ internal: HOST_PORTS.chat, external: HOST_PORTS.chat }],
    uploads: [{ file: CHAT_CONFIG_PATH, content: readRepoFile(CHAT_CONFIG_FILE) }],
    // The three folders LibreChat's deploy-compose.yml mounts: uploaded files, logs, and images (avatars and
    // generated images, kept under client/public/images).
    volumes: { uploads: "/app/uploads", logs: "/app/api/logs", images: "/app/client/public/images" },
    healthcheck: httpCheck("node", `http://127.0.0.1:${HOST_PORTS.chat}/health`, { startPeriod: "60s" }),
    shared: true,
  };
}

/** Component `platform:chat:Chat`. */
export class Chat extends pulumi.ComponentResource {
  readonly container: docker.Container;

  constructor(name: string, args: ChatArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:chat:Chat", name, {}, opts);
    const { ctx } = args;
    const { container } = serviceContainer(this, ctx, {
      ...chatSpec(args, args.mongoUri),
      dependsOn: args.dependsOn,
    });
    this.container = container;
    this.registerOutputs({});
  }
}
