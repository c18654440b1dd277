/**
 * A TCP proxy in front of a real server (Postgres, Redis) that a test can cut, stall and restore, so that the
 * component under test sees its database or cache go away (or hang) without stopping the machine's shared
 * service (other suites run against it at the same time).
 */
import net from "node:net";

export interface TcpProxy {
  /** Port the proxy listens on (127.0.0.1). */
  port: number;
  /** Destroys every open connection and refuses new ones until {@link TcpProxy.restore}. */
  cut(): void;
  /**
   * Holds every byte in both directions, on open and new connections, until {@link TcpProxy.restore}: the
   * server seems to hang (packets dropped, nothing refused or reset).
   */
  stall(): void;
  /** Accepts and forwards connections again (bytes held by a stall are delivered). */
  restore(): void;
  close(): Promise<void>;
}

/** Starts a proxy on an ephemeral port forwarding to `targetHost:targetPort`. */
export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  const releases = new Set<() => void>();
  let isCut = false;
  let stalled = false;
  const server = net.createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const held: Array<[net.Socket, Buffer]> = [];
    const forward = (to: net.Socket) => (chunk: Buffer) => {
      if (stalled) held.push([to, chunk]);
      else to.write(chunk);
    };
    const release = () => {
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    };
    releases.add(release);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      releases.delete(release);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.on("data", forward(upstream));
    upstream.on("data", forward(client));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    cut() {
      isCut = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    stall() {
      stalled = true;
    },
    restore() {
      isCut = false;
      stalled = false;
      for (const release of releases) release();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
