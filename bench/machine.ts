/**
 * The machine a benchmark ran on, stated beside its figures.
 *
 * @module
 */
import os from "node:os";

/** Cores, CPU model, memory, Node version, platform, and how busy the machine was. */
export interface Machine {
  cores: number;
  /** The 1-minute load average when the benchmark started: other work on the same cores slows every figure. */
  loadAverage: number;
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
    loadAverage: os.loadavg()[0] ?? 0,
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}
