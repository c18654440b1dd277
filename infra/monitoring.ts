/**
 * Monitoring: metrics (Prometheus), dashboards (Grafana), alertmanager, and the exporters of relational-db and
 * cache. Configuration comes from monitoring/ (uploaded; a change replaces the container; see
 * monitoring-files.ts for the layout). A missing file fails the program with its name. The alertmanager's
 * webhook URL is ALERT_WEBHOOK_URL from `.env` (a secret: it often carries a token).
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { HOST_PORTS } from "./config.js";
import { httpCheck, type ServiceSpec, serviceContainer } from "./container.js";
import { DB_USER, GATEWAY_DB, type ServiceComponentArgs, type ServiceFacts } from "./datastores.js";
import { IMAGES } from "./images.js";
import { type MonitoringUploads, monitoringUploads } from "./monitoring-files.js";
import { withScrapeToken } from "./scrape-token.js";

/** Inputs of {@link Monitoring}. */
export interface MonitoringArgs extends ServiceComponentArgs {
  /** Containers the exporters watch. */
  dependsOn: pulumi.Resource[];
}

/** Prometheus (`metrics`) with monitoring/ and the gateway scrape token, both renderers. */
export function metricsSpec(base: ServiceFacts, files: MonitoringUploads): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "metrics",
    image: { pull: img.prometheus, tools: IMAGES.prometheus.tools },
    // Overriding the command drops the image's defaults: repeat config and storage, add the reload endpoint.
    command: [
      "--config.file=/etc/prometheus/prometheus.yml",
      "--storage.tsdb.path=/prometheus",
      "--web.enable-lifecycle",
    ],
    volumes: { data: "/prometheus" },
    // prometheus.yml with the gateway's METRICS_TOKEN on its scrape job, uploaded as a secret.
    uploads: files.metrics.map((upload) =>
      upload.file === "/etc/prometheus/prometheus.yml"
        ? pulumi.secret(
            pulumi.output(secrets.metricsToken).apply((token) => ({
              ...upload,
              content: withScrapeToken(upload.content, "gateway", token),
            })),
          )
        : upload,
    ),
    publish: [{ internal: 9090, external: HOST_PORTS.metrics }],
    healthcheck: httpCheck("wget", "http://127.0.0.1:9090/-/healthy"),
  };
}

/** Alertmanager, both renderers. */
export function alertmanagerSpec(base: ServiceFacts, files: MonitoringUploads): ServiceSpec {
  const { config } = base;
  const img = config.images;
  return {
    name: "alertmanager",
    image: { pull: img.alertmanager, tools: IMAGES.alertmanager.tools },
    command: ["--config.file=/etc/alertmanager/alertmanager.yml", "--storage.path=/alertmanager"],
    volumes: { data: "/alertmanager" },
    uploads: [
      config.env.ALERT_WEBHOOK_URL === undefined ? files.alertmanager : pulumi.secret(files.alertmanager),
    ],
    publish: [{ internal: 9093, external: HOST_PORTS.alertmanager }],
    healthcheck: httpCheck("wget", "http://127.0.0.1:9093/-/healthy"),
  };
}

/** Grafana (`dashboards`), both renderers. */
export function dashboardsSpec(base: ServiceFacts, files: MonitoringUploads): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "dashboards",
    image: { pull: img.grafana, tools: IMAGES.grafana.tools },
    // Admin env applies on the first start only (Grafana keeps the user in its volume).
    env: {
      GF_SECURITY_ADMIN_USER: config.env.DASHBOARD_ADMIN_USER,
      GF_SECURITY_ADMIN_PASSWORD: secrets.dashboardAdminPassword,
      GF_SERVER_ROOT_URL: config.urls.dashboards,
      GF_USERS_ALLOW_SIGN_UP: "false",
      GF_ANALYTICS_REPORTING_ENABLED: "false",
    },
    volumes: { data: "/var/lib/grafana" },
    uploads: files.dashboards,
    publish: [{ internal: 3000, external: HOST_PORTS.dashboards }],
    healthcheck: httpCheck("curl", "http://127.0.0.1:3000/api/health"),
  };
}

/** The Postgres exporter, both renderers. */
export function relationalDbExporterSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "relational-db-exporter",
    image: { pull: img.postgresExporter, tools: IMAGES.postgresExporter.tools },
    env: {
      DATA_SOURCE_URI: `relational-db:5432/${GATEWAY_DB}?sslmode=disable`,
      DATA_SOURCE_USER: DB_USER,
      DATA_SOURCE_PASS: secrets.relationalDbPassword,
    },
    healthcheck: httpCheck("wget", "http://127.0.0.1:9187/metrics"),
  };
}

/** The Redis exporter, both renderers. */
export function cacheExporterSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "cache-exporter",
    image: { pull: img.redisExporter, tools: IMAGES.redisExporter.tools },
    env: { REDIS_ADDR: "redis://cache:6379", REDIS_PASSWORD: secrets.cachePassword },
    healthcheck: httpCheck("wget", "http://127.0.0.1:9121/health"),
  };
}

/** Component `platform:monitoring:Monitoring`. */
export class Monitoring extends pulumi.ComponentResource {
  readonly containers: docker.Container[];

  constructor(name: string, args: MonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:monitoring:Monitoring", name, {}, opts);
    const { ctx, config } = args;
    const files = monitoringUploads(config.env.ALERT_WEBHOOK_URL);

    const metrics = serviceContainer(this, ctx, {
      ...metricsSpec(args, files),
    });

    const alertmanager = serviceContainer(this, ctx, {
      ...alertmanagerSpec(args, files),
    });

    const dashboards = serviceContainer(this, ctx, {
      ...dashboardsSpec(args, files),
      dependsOn: [metrics.container],
    });

    const relationalExporter = serviceContainer(this, ctx, {
      ...relationalDbExporterSpec(args),
      dependsOn: args.dependsOn,
    });

    const cacheExporter = serviceContainer(this, ctx, {
      ...cacheExporterSpec(args),
      dependsOn: args.dependsOn,
    });

    this.containers = [
      metrics.container,
      alertmanager.container,
      dashboards.container,
      relationalExporter.container,
      cacheExporter.container,
    ];
    this.registerOutputs({});
  }
}
