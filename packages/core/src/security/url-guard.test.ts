import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import { assertPublicUrl, createGuardedFetch, fetchPinned, isPrivateAddress } from "./url-guard.ts";

describe("isPrivateAddress", () => {
  test.each([
    // loopback, unspecified, RFC 1918, link-local, CGNAT
    "127.0.0.1",
    "127.1.2.3",
    "0.0.0.0",
    "0.1.2.3",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    // IETF protocol assignments, documentation (TEST-NET-1/2/3), benchmarking, 6to4 relay
    "192.0.0.8",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "198.18.0.1",
    "198.19.255.255",
    "192.88.99.1",
    // multicast, reserved, broadcast
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    // IPv6 loopback, unspecified, link-local, unique-local, site-local, multicast, discard
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "ff02::1",
    "100::1",
    // IPv4-mapped, -translated (RFC 6145) and -compatible forms
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:192.0.2.1",
    "::ffff:0:127.0.0.1",
    "::ffff:0:7f00:1",
    "::ffff:0:8.8.8.8",
    "::127.0.0.1",
    "::7f00:1",
    // NAT64 (RFC 6052, RFC 8215), 6to4, Teredo, documentation, benchmarking, ORCHID
    "64:ff9b::7f00:1",
    "64:ff9b::808:808",
    "64:ff9b:1::a00:1",
    "2002:7f00:1::1",
    "2002:c0a8:101::1",
    "2002:808:808::1",
    "2001::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:db8::1",
    "3fff::1",
    "2001:2::1",
    "2001:20::1",
    // not an address
    "localhost",
    "",
  ])("%p is refused", (ip) => expect(isPrivateAddress(ip)).toBe(true));
  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "198.20.0.1",
    "2606:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
  ])("%p is public", (ip) => expect(isPrivateAddress(ip)).toBe(false));
});

const message = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return PromptrunError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return "resolved";
};

describe("assertPublicUrl", () => {
  test("refuses loopback, documentation and translated forms in any URL spelling", async () => {
    for (const url of [
      "http://127.0.0.1/x",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::1]/",
      "http://localhost:8080/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:0:127.0.0.1]/",
      "http://[2002:7f00:1::1]/",
      "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
      "http://192.0.2.10/",
      "http://3325256714/",
      "https://198.18.0.1/",
    ]) {
      expect(await message(assertPublicUrl(url, { allowPrivate: false }))).toContain(
        "invalid: url must resolve",
      );
    }
  });

  test("a host that does not resolve and one that resolves privately get the same message", async () => {
    const unresolvable = await message(
      assertPublicUrl("https://nowhere.internal/", {
        allowPrivate: false,
        resolve: async () => {
          throw Object.assign(new Error("queryA ENOTFOUND nowhere.internal"), { code: "ENOTFOUND" });
        },
      }),
    );
    const privateHost = await message(
      assertPublicUrl("https://db.internal/", { allowPrivate: false, resolve: async () => ["10.0.0.5"] }),
    );
    const noAddresses = await message(
      assertPublicUrl("https://empty.internal/", { allowPrivate: false, resolve: async () => [] }),
    );
    expect(unresolvable).toStartWith("invalid: ");
    expect(unresolvable).toBe(privateHost);
    expect(noAddresses).toBe(privateHost);
    expect(unresolvable).not.toContain("nowhere.internal");
  });

  test("refuses a name when any of its addresses is private", async () => {
    const resolve = async () => ["8.8.8.8", "127.0.0.1"];
    expect(await message(assertPublicUrl("https://mixed.test/", { allowPrivate: false, resolve }))).toContain(
      "must resolve to a public address",
    );
  });

  test("refuses other schemes and credentials; allows private when configured", async () => {
    await expect(assertPublicUrl("file:///etc/passwd", { allowPrivate: false })).rejects.toThrow("http(s)");
    await expect(assertPublicUrl("http://u:p@example.com/", { allowPrivate: false })).rejects.toThrow(
      "credentials",
    );
    await expect(assertPublicUrl("http://127.0.0.1/", { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });
});

describe("createGuardedFetch: DNS rebinding", () => {
  let hits = 0;
  let local: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    local = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        hits++;
        return new Response("internal secret");
      },
    });
  });
  afterAll(() => local.stop(true));

  test("connects to the address that was checked, not to what the name resolves to later", async () => {
    // `localhost` is the rebinding name: the guard's resolver answers a public address, while the
    // system resolver that a second lookup at connect time would use answers 127.0.0.1.
    const answers = [["8.8.8.8"], ["127.0.0.1"]];
    const resolved: string[] = [];
    const connectedTo: string[] = [];
    const guarded = createGuardedFetch({
      allowPrivate: false,
      resolve: async (host) => {
        resolved.push(host);
        return answers.shift() ?? ["127.0.0.1"];
      },
      fetch: ((input: Request, init?: RequestInit) => {
        connectedTo.push(new URL(input.url).host);
        return fetch(input, init);
      }) as typeof fetch,
    });
    const outcome = await message(
      guarded(`http://localhost:${local.port}/hook`, {
        method: "POST",
        body: "{}",
        signal: AbortSignal.timeout(1_500),
      }),
    );
    expect(outcome).not.toBe("resolved");
    expect(resolved).toEqual(["localhost"]);
    expect(connectedTo).toEqual([`8.8.8.8:${local.port}`]);
    expect(hits).toBe(0);
  });
});

describe("fetchPinned", () => {
  const cert = Bun.file(new URL("./fixtures/hook-test.cert.pem", import.meta.url));
  const key = Bun.file(new URL("./fixtures/hook-test.key.pem", import.meta.url));
  let server: ReturnType<typeof Bun.serve>;
  let ca: string;
  beforeAll(async () => {
    ca = await cert.text();
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key },
      fetch: async (request) =>
        Response.json({
          host: request.headers.get("host"),
          body: await request.text(),
          method: request.method,
        }),
    });
  });
  afterAll(() => server.stop(true));

  // Trusts the fixture's self-signed certificate (for hook.test) on top of what fetchPinned asks.
  const trustingFixture = ((input: Request, init?: RequestInit & { tls?: object }) =>
    fetch(input, { ...init, tls: { ...init?.tls, ca } } as RequestInit)) as typeof fetch;

  test("keeps the name for Host, SNI and the certificate check while connecting to the IP", async () => {
    const request = new Request(`https://hook.test:${server.port}/path`, { method: "POST", body: '{"a":1}' });
    const response = await fetchPinned(request, "127.0.0.1", trustingFixture);
    expect(await response.json()).toEqual({
      host: `hook.test:${server.port}`,
      body: '{"a":1}',
      method: "POST",
    });
  });

  // Runs after the test above: a kept-alive connection to the same IP for hook.test must not be
  // reused for another name (its certificate would then go unchecked).
  test("a certificate for another name is refused", async () => {
    const request = new Request(`https://other.test:${server.port}/path`);
    expect(await message(fetchPinned(request, "127.0.0.1", trustingFixture))).toContain("ALTNAME");
  });
});

describe("createGuardedFetch: redirects", () => {
  interface Seen {
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string;
  }
  const seen: Seen[] = [];
  const record = async (request: Request) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      path: url.pathname,
      headers: Object.fromEntries(request.headers),
      body: await request.text(),
    });
  };
  let other: ReturnType<typeof Bun.serve>;
  let origin: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    // Another port is another origin.
    other = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        await record(request);
        return new Response("landed");
      },
    });
    origin = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        await record(request);
        const url = new URL(request.url);
        const status = Number(url.searchParams.get("status") ?? 302);
        const to = url.searchParams.get("to");
        if (to === "same") return new Response(null, { status, headers: { location: "/landed" } });
        if (to === "other")
          return new Response(null, { status, headers: { location: `${other.url}landed` } });
        return new Response("landed");
      },
    });
  });
  afterAll(() => {
    other.stop(true);
    origin.stop(true);
  });

  const guarded = createGuardedFetch({ allowPrivate: true });
  const secrets = {
    authorization: "Bearer sk-tenant",
    "x-api-key": "sk-ant-tenant",
    "api-key": "azure-tenant",
    "content-type": "application/json",
    accept: "text/event-stream",
  };
  const lastHop = () => seen.at(-1) as Seen;

  test("a hop to another origin carries no credential header; one on the same origin keeps them", async () => {
    seen.length = 0;
    expect(await (await guarded(`${origin.url}start?to=other`, { headers: secrets })).text()).toBe("landed");
    expect(lastHop().path).toBe("/landed");
    expect(lastHop().headers.authorization).toBeUndefined();
    expect(lastHop().headers["x-api-key"]).toBeUndefined();
    expect(lastHop().headers["api-key"]).toBeUndefined();
    expect(lastHop().headers.accept).toBe("text/event-stream");

    expect(await (await guarded(`${origin.url}start?to=same`, { headers: secrets })).text()).toBe("landed");
    expect(lastHop().headers.authorization).toBe("Bearer sk-tenant");
    expect(lastHop().headers["x-api-key"]).toBe("sk-ant-tenant");
  });

  test("307 and 308 repeat the method and the body; 302 and 303 of a POST become a body-less GET", async () => {
    const post = { method: "POST", headers: secrets, body: JSON.stringify({ model: "m", stream: true }) };
    for (const status of [307, 308]) {
      seen.length = 0;
      await guarded(`${origin.url}start?to=other&status=${status}`, post);
      expect(seen.map((hop) => [hop.method, hop.body])).toEqual([
        ["POST", post.body],
        ["POST", post.body],
      ]);
      expect(lastHop().headers["content-type"]).toBe("application/json");
      expect(lastHop().headers.authorization).toBeUndefined();
    }
    for (const status of [302, 303]) {
      seen.length = 0;
      await guarded(`${origin.url}start?to=same&status=${status}`, post);
      expect(lastHop().method).toBe("GET");
      expect(lastHop().body).toBe("");
      expect(lastHop().headers["content-type"]).toBeUndefined();
      // Same origin: the credential stays.
      expect(lastHop().headers.authorization).toBe("Bearer sk-tenant");
    }
  });
});
