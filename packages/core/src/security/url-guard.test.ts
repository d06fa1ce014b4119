import { describe, expect, test } from "bun:test";
import { assertPublicUrl, isPrivateAddress } from "./url-guard.ts";

describe("isPrivateAddress", () => {
  test.each([
    "127.0.0.1",
    "127.1.2.3",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
  ])("%s is private", (ip) => expect(isPrivateAddress(ip)).toBe(true));
  test.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])(
    "%s is public",
    (ip) => expect(isPrivateAddress(ip)).toBe(false),
  );
});

describe("assertPublicUrl", () => {
  test("refuses loopback in any spelling, since URL parsing normalises them", async () => {
    for (const url of [
      "http://127.0.0.1/x",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::1]/",
      "http://localhost:8080/",
      "http://[::ffff:127.0.0.1]/",
    ]) {
      await expect(assertPublicUrl(url, { allowPrivate: false })).rejects.toThrow("private");
    }
  });
  test("refuses other schemes and credentials; allows private when configured", async () => {
    await expect(assertPublicUrl("file:///etc/passwd", { allowPrivate: false })).rejects.toThrow("http(s)");
    await expect(assertPublicUrl("http://u:p@example.com/", { allowPrivate: false })).rejects.toThrow(
      "credentials",
    );
    await expect(assertPublicUrl("http://127.0.0.1/", { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });
});
