/**
 * The monitoring configuration the stack ships from `monitoring/` into its containers, read and checked at
 * program time so that a missing file fails `pulumi up` with its name instead of leaving an image default:
 *
 *   monitoring/prometheus.yml                → metrics:      /etc/prometheus/prometheus.yml
 *   monitoring/rules/*.yml                   → metrics:      /etc/prometheus/rules/
 *   monitoring/alertmanager.yml              → alertmanager: /etc/alertmanager/alertmanager.yml (webhook URL filled in)
 *   monitoring/grafana/provisioning/**       → dashboards:   /etc/grafana/provisioning/
 *   monitoring/grafana/dashboards/*.json     → dashboards:   /var/lib/grafana/dashboards/
 */
import { parseDocument, YAMLMap, YAMLSeq } from "yaml";
import { REPO_ROOT, readRepoFile, requiredUpload, type Upload, uploadTree } from "./files.js";

/** Where Grafana's dashboard provider (monitoring/grafana/provisioning/dashboards/) looks for dashboards. */
export const GRAFANA_DASHBOARDS_DIR = "/var/lib/grafana/dashboards";

/** The webhook URL monitoring/alertmanager.yml carries until ALERT_WEBHOOK_URL replaces it. */
export const WEBHOOK_PLACEHOLDER = "http://alert-webhook.invalid/replaced-by-ALERT_WEBHOOK_URL";

/** Files the stack cannot run without, relative to the repository root; monitoring/rules/ must hold a file too. */
export const REQUIRED_MONITORING_FILES = [
  "monitoring/prometheus.yml",
  "monitoring/alertmanager.yml",
  "monitoring/grafana/provisioning/datasources/prometheus.yml",
  "monitoring/grafana/provisioning/dashboards/platform.yml",
  "monitoring/grafana/dashboards/litellm-overview.json",
  "monitoring/grafana/dashboards/platform.json",
] as const;

/** The uploads of each monitoring container. */
export interface MonitoringUploads {
  metrics: Upload[];
  alertmanager: Upload;
  dashboards: Upload[];
}

/**
 * Returns monitoring/alertmanager.yml with the webhook placeholder replaced by `webhookUrl`; without a URL,
 * the placeholder's webhook is removed (its receiver keeps no integration: alerts are listed in
 * Alertmanager only). A file without the placeholder is returned as written when no URL is given.
 * @throws Error when a URL is given but the file has no webhook with the placeholder to put it in.
 */
export function renderAlertmanagerConfig(text: string, webhookUrl: string | undefined): string {
  const doc = parseDocument(text);
  let found = false;
  const receivers = doc.get("receivers");
  for (const receiver of receivers instanceof YAMLSeq ? receivers.items : []) {
    if (!(receiver instanceof YAMLMap)) continue;
    const hooks = receiver.get("webhook_configs");
    if (!(hooks instanceof YAMLSeq)) continue;
    for (const hook of [...hooks.items]) {
      if (!(hook instanceof YAMLMap) || hook.get("url") !== WEBHOOK_PLACEHOLDER) continue;
      found = true;
      if (webhookUrl !== undefined) hook.set("url", webhookUrl);
      else hooks.items.splice(hooks.items.indexOf(hook), 1);
    }
    if (hooks.items.length === 0) receiver.delete("webhook_configs");
  }
  if (webhookUrl !== undefined && !found) {
    throw new Error(
      `monitoring/alertmanager.yml has no webhook_configs url ${WEBHOOK_PLACEHOLDER} for ALERT_WEBHOOK_URL to replace`,
    );
  }
  return doc.toString();
}

/**
 * Reads monitoring/ for the three monitoring containers.
 * @param webhookUrl ALERT_WEBHOOK_URL from `.env`, or undefined.
 * @param root the repository root (tests point it at a copy).
 * @throws Error naming the first missing file or folder of monitoring/.
 */
export function monitoringUploads(
  webhookUrl: string | undefined,
  root: string = REPO_ROOT,
): MonitoringUploads {
  for (const rel of REQUIRED_MONITORING_FILES) readRepoFile(rel, root);
  const rules = uploadTree("monitoring/rules", "/etc/prometheus/rules", root);
  const prometheus = requiredUpload("monitoring/prometheus.yml", "/etc/prometheus/prometheus.yml", root);
  const alertmanager = requiredUpload(
    "monitoring/alertmanager.yml",
    "/etc/alertmanager/alertmanager.yml",
    root,
  );
  const provisioning = uploadTree("monitoring/grafana/provisioning", "/etc/grafana/provisioning", root);
  const dashboards = uploadTree("monitoring/grafana/dashboards", GRAFANA_DASHBOARDS_DIR, root);
  return {
    metrics: [prometheus, ...rules],
    alertmanager: { ...alertmanager, content: renderAlertmanagerConfig(alertmanager.content, webhookUrl) },
    dashboards: [...provisioning, ...dashboards],
  };
}
