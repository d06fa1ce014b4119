import { cpus, totalmem } from "node:os";

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  bunVersion: string;
  wrkVersion: string | null;
}

const firstLine = (command: string[]): string => {
  try {
    const result = Bun.spawnSync(command);
    return `${result.stdout.toString()}${result.stderr.toString()}`.trim().split("\n")[0] ?? "";
  } catch {
    return "";
  }
};

export function machineInfo(): MachineInfo {
  const nproc = Number(firstLine(["nproc"]));
  return {
    cores: nproc > 0 ? nproc : cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: totalmem() / 1024 ** 3,
    kernel: firstLine(["uname", "-r"]),
    bunVersion: Bun.version,
    wrkVersion: Bun.which("wrk")
      ? firstLine(["wrk", "--version"]).replace(/\s+Copyright.*$/, "") || null
      : null,
  };
}
