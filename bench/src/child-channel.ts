import type { Message } from "./child-protocol.ts";

/** The parent side of the bench's process protocol (see child-protocol.ts). */
export interface ChildChannel {
  readonly pid: number;
  send(message: Message & Record<string, unknown>): void;
  /** The next message of this type (queued ones first); rejects when the child exits or on timeout. */
  next<T extends Message>(type: string, timeoutMs?: number): Promise<T>;
  /** SIGTERM, then SIGKILL after graceMs; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  readonly exited: Promise<number>;
  /** What the child wrote on stderr (and non-JSON stdout lines), for error messages. */
  output(): string;
  /** CPU seconds the child used (user + system), once it has exited. */
  cpuSeconds(): number | null;
}

export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Raise the open-files limit of the child (10k sockets need more than a default 1024). */
  fileLimit?: number;
}

let hardFileLimit: number | null = null;

/** Every child still running, so a bench that fails or overruns can end them all. */
const liveChildren = new Set<{ kill(signal?: number | NodeJS.Signals): void }>();

/** SIGKILLs every child spawned through spawnChild that has not exited yet. */
export function killAllChildren(): void {
  for (const child of liveChildren) child.kill("SIGKILL");
  liveChildren.clear();
}

/** The hard RLIMIT_NOFILE of this process (what a child may raise its soft limit to). */
export function hardOpenFilesLimit(): number {
  if (hardFileLimit === null) {
    const text = Bun.spawnSync(["sh", "-c", "ulimit -Hn"]).stdout.toString().trim();
    hardFileLimit = text === "unlimited" ? 1_048_576 : Number(text) || 1024;
  }
  return hardFileLimit;
}

/**
 * Runs the command through sh, which raises its soft open-files limit to `limit` (capped by the
 * hard limit, never lowered) and then execs it, so the pid stays the command's.
 */
export function withFileLimit(command: string[], limit: number): string[] {
  const wanted = Math.min(limit, hardOpenFilesLimit());
  const script = `[ "$(ulimit -Sn)" != unlimited ] && [ "$(ulimit -Sn)" -lt ${wanted} ] && ulimit -Sn ${wanted}; exec "$@"`;
  return ["sh", "-c", script, "sh", ...command];
}

export function spawnChild(command: string[], options: SpawnOptions = {}): ChildChannel {
  const argv = options.fileLimit ? withFileLimit(command, options.fileLimit) : command;
  const child = Bun.spawn(argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  liveChildren.add(child);
  const queued = new Map<string, Message[]>();
  const waiters = new Map<string, Array<(message: Message) => void>>();
  let output = "";
  let exitCode: number | null = null;

  const deliver = (message: Message) => {
    const waiting = waiters.get(message.type);
    const wake = waiting?.shift();
    if (wake) return wake(message);
    const list = queued.get(message.type) ?? [];
    list.push(message);
    queued.set(message.type, list);
  };

  const pump = async (stream: ReadableStream<Uint8Array>, parse: boolean) => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true });
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        newline = pending.indexOf("\n");
        if (parse && line.startsWith("{")) {
          try {
            const message = JSON.parse(line) as Message;
            if (typeof message.type === "string") {
              deliver(message);
              continue;
            }
          } catch {
            // not a protocol line: keep it as output
          }
        }
        output = `${output}${line}\n`.slice(-20_000);
      }
    }
  };
  const pumped = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  const exited = child.exited.then(async (code) => {
    exitCode = code;
    liveChildren.delete(child);
    await pumped.catch(() => undefined);
    return code;
  });

  return {
    pid: child.pid,
    exited,
    send(message) {
      if (exitCode !== null) return;
      child.stdin.write(`${JSON.stringify(message)}\n`);
      child.stdin.flush();
    },
    next<T extends Message>(type: string, timeoutMs = 60_000): Promise<T> {
      const list = queued.get(type);
      const first = list?.shift();
      if (first) return Promise.resolve(first as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          remove();
          reject(
            new Error(
              `child ${child.pid}: no '${type}' message after ${timeoutMs} ms\n${output.slice(-3000)}`,
            ),
          );
        }, timeoutMs);
        const wake = (message: Message) => {
          clearTimeout(timer);
          resolve(message as T);
        };
        const remove = () => {
          const list = waiters.get(type) ?? [];
          const index = list.indexOf(wake);
          if (index >= 0) list.splice(index, 1);
        };
        waiters.set(type, [...(waiters.get(type) ?? []), wake]);
        exited.then((code) => {
          clearTimeout(timer);
          remove();
          reject(new Error(`child ${child.pid} exited (${code}) before '${type}'\n${output.slice(-3000)}`));
        });
      });
    },
    async stop(graceMs = 10_000) {
      if (exitCode !== null) return exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    output: () => output,
    cpuSeconds() {
      const usage = exitCode === null ? undefined : child.resourceUsage();
      return usage ? Number(usage.cpuTime.total) / 1e6 : null;
    },
  };
}
