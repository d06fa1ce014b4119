/** wrk (Debian's package) as the load generator for request/response throughput. */

export interface WrkRequest {
  method: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface WrkResult {
  requestsPerSecond: number;
  totalRequests: number;
  durationSeconds: number;
  latencyMs: { p50: number; p75: number; p90: number; p99: number };
  /** Responses outside 2xx/3xx. */
  non2xx: number;
  socketErrors: number;
  /** CPU seconds wrk itself used (it shares the machine with the server). */
  cpuSeconds: number;
}

/** Lua long brackets need a level that the text does not contain. */
const luaString = (text: string): string => {
  let level = "";
  while (text.includes(`]${level}]`)) level += "=";
  return `[${level}[${text}]${level}]`;
};

export function wrkScript(request: WrkRequest): string {
  const lines = [`wrk.method = ${luaString(request.method)}`];
  if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`);
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  }
  return `${lines.join("\n")}\n`;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

const toMs = (value: string, unit: string): number => Number(value) * (UNIT_MS[unit] ?? Number.NaN);

export function parseWrkOutput(text: string): Omit<WrkResult, "cpuSeconds"> {
  const percentile = (p: number) => {
    const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(text);
    if (!match) throw new Error(`wrk output has no ${p}% latency:\n${text}`);
    return toMs(match[1]!, match[2]!);
  };
  const total = /^\s+(\d+) requests in ([\d.]+)(us|ms|s|m),/m.exec(text);
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(text);
  if (!total || !rate) throw new Error(`unexpected wrk output:\n${text}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requestsPerSecond: Number(rate[1]),
    totalRequests: Number(total[1]),
    durationSeconds: toMs(total[2]!, total[3]!) / 1000,
    latencyMs: { p50: percentile(50), p75: percentile(75), p90: percentile(90), p99: percentile(99) },
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0,
  };
}

export const wrkAvailable = (): boolean => Bun.which("wrk") !== null;

export interface WrkOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  threads?: number;
  request?: WrkRequest;
  /** Directory for the Lua script. */
  scratchDir: string;
}

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const threads = Math.min(options.threads ?? 1, options.connections);
  const argv = [
    "wrk",
    `-t${threads}`,
    `-c${options.connections}`,
    `-d${options.durationSeconds}s`,
    "--timeout",
    "10s",
    "--latency",
  ];
  if (options.request) {
    const scriptPath = `${options.scratchDir}/wrk-${Bun.randomUUIDv7()}.lua`;
    await Bun.write(scriptPath, wrkScript(options.request));
    argv.push("-s", scriptPath);
  }
  argv.push(options.url);
  const child = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${stderr}\n${stdout}`);
  const usage = child.resourceUsage();
  return { ...parseWrkOutput(stdout), cpuSeconds: usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN };
}
