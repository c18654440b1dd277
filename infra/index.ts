/**
 * Entry point of the Pulumi program (Pulumi.yaml `main: infra/`): reads the stack's config and `.env`,
 * declares the stack, exports its outputs.
 */
import { loadConfig } from "./config.js";
import { buildKubernetesPlatform } from "./kubernetes/stack.js";
import { buildPlatform } from "./platform.js";

const config = loadConfig();
const { outputs } =
  config.stack.target === "kubernetes" ? buildKubernetesPlatform(config) : buildPlatform(config);

/** Every public URL of the stack (chat, console, gateway, gatewayApi, trace, dashboards, metrics, alertmanager). */
export const urls = outputs.urls;
/** Trace viewer login: initial admin e-mail and TRACE_INIT_USER_PASSWORD (secret). */
export const traceLogin = outputs.traceLogin;
/** Dashboards login: DASHBOARD_ADMIN_USER and DASHBOARD_ADMIN_PASSWORD (secret). */
export const dashboardsLogin = outputs.dashboardsLogin;
/** GATEWAY_MASTER_KEY (secret): `pulumi stack output --show-secrets gatewayMasterKey`. */
export const gatewayMasterKey = outputs.gatewayMasterKey;
/**
 * Names of the stack's data volumes (kubernetes: PersistentVolumeClaims); they outlive `pulumi destroy`
 * (docs/operations.md, "Volumes"; docs/kubernetes.md, "Teardown").
 */
export const dataVolumes = outputs.dataVolumes;
