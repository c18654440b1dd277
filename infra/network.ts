/**
 * The stack's container network: every service joins it under its service name (SERVICES in infra/config.ts).
 */
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";

/** Inputs of {@link Network}. */
export interface NetworkArgs {
  /** Docker network name, e.g. `platform`. */
  name: string;
}

/** Component `platform:network:Network`: one bridge network, attachable so tools can join it for debugging. */
export class Network extends pulumi.ComponentResource {
  readonly network: docker.Network;

  constructor(name: string, args: NetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:network:Network", name, {}, opts);
    this.network = new docker.Network(
      name,
      { name: args.name, driver: "bridge", attachable: true },
      { parent: this },
    );
    this.registerOutputs({ networkName: this.network.name });
  }
}
