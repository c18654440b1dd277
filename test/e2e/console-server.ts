/**
 * The console for `npm run e2e`: the console's own app (buildApp, the same routes, session logic, gateway admin
 * client and metrics as services/console/server/server.ts) with LibreChat's MongoDB replaced by its contract
 * fake, in process, behind the console's `LibreChatStore` interface. The console can only reach a real
 * MongoDB through the driver, and MongoDB cannot run on this machine.
 *
 * Environment: the console's own (README "Console"; MONGO_URI is required by its config reader but unused).
 * The fake holds one registered chat account, `E2E_CHAT_ADMIN_EMAIL` (default admin@e2e.local, role ADMIN).
 * No web bundle is served (pages answer 503 naming the build command); the JSON API, /_health and /metrics
 * are the real ones. Exits 0 on SIGTERM/SIGINT after closing the server.
 */
import { AdminApiClient } from "@platform/admin-api";
import { buildApp } from "../../services/console/server/app.js";
import { readConsoleEnv } from "../../services/console/server/config.js";
import { createLogger } from "../../services/console/server/logger.js";
import { FakeLibreChatMongo } from "../fixtures/librechat-mongo.js";

const config = readConsoleEnv();
const log = createLogger(config.logLevel);
const store = new FakeLibreChatMongo();
store.register(process.env.E2E_CHAT_ADMIN_EMAIL ?? "admin@e2e.local", "ADMIN");
const gateway = new AdminApiClient({ baseUrl: config.gatewayUrl, masterKey: config.masterKey });
const { app } = await buildApp({ config, gateway, store, webRoot: null, loggerInstance: log });
const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
const address = await app.listen({ port: config.port, host: config.host });
log.info(
  { address, gateway: config.gatewayUrl },
  "console (e2e, chat database: in-process contract fake) listening",
);
