/**
 * The machine a benchmark ran on, stated beside its figures.
 *
 * @module
 */
import os from "node:os";

/** Cores, CPU model, memory, Node version and platform. */
export interface Machine {
  cores: number;
  cpuModel: string;
  totalMemoryBytes: number;
  node: string;
  platform: string;
}

/** Describes this machine. */
export function describeMachine(): Machine {
  const cpus = os.cpus();
  return {
    cores: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}
