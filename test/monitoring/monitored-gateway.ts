/**
 * A real gateway with everything that puts series into its /metrics: Postgres (keys, users, spend buffer),
 * Redis (shared limits), trace export to the Langfuse contract fake, a priced deployment on the fake OpenAI
 * upstream, a user and a virtual key with budgets, and a team with a budget and a key of its own, so calls
 * through {@link MonitoredGateway.traffic} fill the request, token, spend, latency, TTFT and budget series, the
 * team-labelled ones too.
 */
import { startFakeLangfuse } from "../fixtures/langfuse.js";
import { startFakeUpstream } from "../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { createTestDatabase } from "../helpers/postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../helpers/redis.js";

/** USD per token of the test deployment, so every call costs something. */
const PRICED = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

export interface MonitoredGateway {
  gateway: TestGateway;
  /** host:port of the gateway, a Prometheus scrape target. */
  target: string;
  /** `count` chat calls with the virtual key (alias `monitoring-test`), every other one streamed, then one with the team's key. */
  traffic(count: number): Promise<void>;
  /** Stops the gateway (idempotent); the rest stays up until {@link close}. */
  stopGateway(): Promise<void>;
  close(): Promise<void>;
}

async function admin(gw: TestGateway, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await adminCall(gw, "POST", path, body);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Starts the fake upstream, a fresh database, a Redis prefix and the gateway; creates the user and key. */
export async function startMonitoredGateway(suite: string): Promise<MonitoredGateway> {
  const upstream = await startFakeUpstream({ record: false });
  const langfuse = await startFakeLangfuse();
  const db = await createTestDatabase();
  const prefix = uniquePrefix(suite);
  const gateway = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url, PRICED)}`,
    {
      DATABASE_URL: db.url,
      REDIS_URL,
      TRACE_HOST: langfuse.url,
      TRACE_PUBLIC_KEY: langfuse.publicKey,
      TRACE_SECRET_KEY: langfuse.secretKey,
    },
    { store: { flushIntervalMs: 200 }, limits: { keyPrefix: prefix } },
  );
  await admin(gateway, "/user/new", { user_id: "alice", max_budget: 50, budget_duration: "30d" });
  const { key } = (await admin(gateway, "/key/generate", {
    key_alias: "monitoring-test",
    user_id: "alice",
    max_budget: 5,
    budget_duration: "1d",
  })) as { key: string };
  const client = gateway.clientWith(key);
  await admin(gateway, "/team/new", { team_id: "platform", team_alias: "Platform", max_budget: 20 });
  const team = (await admin(gateway, "/key/generate", {
    team_id: "platform",
    key_alias: "monitoring-team",
  })) as {
    key: string;
  };
  const teamClient = gateway.clientWith(team.key);

  let stopped: Promise<void> | undefined;
  const stopGateway = () => {
    stopped ??= gateway.close();
    return stopped;
  };
  return {
    gateway,
    target: new URL(gateway.url).host,
    async traffic(count) {
      for (let i = 0; i < count; i++) {
        const messages = [{ role: "user" as const, content: `call ${i}` }];
        if (i % 2 === 0) {
          await client.chat.completions.create({ model: "general", messages });
        } else {
          const stream = await client.chat.completions.create({ model: "general", messages, stream: true });
          for await (const _chunk of stream) {
            // drain
          }
        }
      }
      await teamClient.chat.completions.create({
        model: "general",
        messages: [{ role: "user", content: "team" }],
      });
    },
    stopGateway,
    async close() {
      await stopGateway();
      await upstream.close();
      await langfuse.close();
      await db.drop();
      await deleteKeys(prefix);
    },
  };
}
