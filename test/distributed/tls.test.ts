/**
 * What a real deployment needs of the Redis frontier, against Debian's
 * redis-server: TLS with a certificate authority and a client certificate
 * (made here with openssl), and the URL, with its password, from the
 * environment rather than the command line.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import { FrontierError, RedisFrontier } from "../../src/distributed/index.js";
import { startDemoSite, type SyntheticSite } from "../../src/site/index.js";
import { CLI_PATH, requireBuiltCli } from "../cli/cli-process.js";
import { describeWithRedis, findOnPath, freeLoopbackPort, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";

/** Makes a CA, and a server and a client certificate it signs, in `dir`; returns their paths. */
function makeCertificates(dir: string): Record<"ca" | "caKey" | "serverCert" | "serverKey" | "clientCert" | "clientKey", string> {
  const file = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync("openssl", args, { stdio: "ignore" });
  };
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA", "-keyout", file("ca.key"), "-out", file("ca.pem"));
  writeFileSync(file("server.ext"), "subjectAltName=IP:127.0.0.1\n");
  for (const [name, extra] of [["server", ["-extfile", file("server.ext")]], ["client", []]] as const) {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${name}`, "-keyout", file(`${name}.key`), "-out", file(`${name}.csr`));
    openssl("x509", "-req", "-in", file(`${name}.csr`), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial", "-days", "2", "-out", file(`${name}.pem`), ...extra);
  }
  return { ca: file("ca.pem"), caKey: file("ca.key"), serverCert: file("server.pem"), serverKey: file("server.key"), clientCert: file("client.pem"), clientKey: file("client.key") };
}

/** Runs the built command with `env` added, and resolves with how it ended. */
function runWithEnv(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const OPENSSL = findOnPath("openssl");

describeWithRedis("the Redis frontier over TLS, and its URL from the environment", () => {
  let dir = "";
  let certs: ReturnType<typeof makeCertificates>;
  let redis: RedisServer;
  let tlsUrl = "";
  let demo: SyntheticSite;

  beforeAll(async () => {
    if (OPENSSL === null) throw new Error("openssl not found: it makes the certificates of this test");
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), "cc-redis-tls-"));
    certs = makeCertificates(dir);
    const tlsPort = await freeLoopbackPort();
    redis = await startRedis({
      args: ["--tls-port", String(tlsPort), "--tls-cert-file", certs.serverCert, "--tls-key-file", certs.serverKey, "--tls-ca-cert-file", certs.ca, "--requirepass", "tls-s3cret"],
    });
    tlsUrl = `rediss://:tls-s3cret@127.0.0.1:${tlsPort}/0`;
    demo = await startDemoSite();
  });
  afterAll(async () => {
    await demo?.close();
    await redis?.remove();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("crawls over TLS with the CA file and a client certificate, which this Redis asks for", async () => {
    const frontier = await RedisFrontier.open({ url: tlsUrl, name: "over-tls", tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey } });
    try {
      const result = await within(30_000, crawl(demo.url, { maxTasks: 4 }, frontier), "a crawl over TLS");
      expect(result.recorded).toBeGreaterThan(10);
      expect(result.todo).toBe(0);
    } finally {
      await frontier.close();
    }
  });

  it("fails to open with a FrontierError without the client certificate, or without the CA, and says which file it cannot read", async () => {
    await expect(RedisFrontier.open({ url: tlsUrl, name: "x", tls: { caFile: certs.ca } })).rejects.toBeInstanceOf(FrontierError);
    await expect(RedisFrontier.open({ url: tlsUrl, name: "x", tls: { certFile: certs.clientCert, keyFile: certs.clientKey } })).rejects.toThrow(/^cannot use Redis at rediss:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0: /);
    await expect(RedisFrontier.open({ url: tlsUrl, name: "x", tls: { caFile: join(dir, "missing.pem") } })).rejects.toThrow(/cannot read the CA file ".*missing\.pem": .*ENOENT/);
    await expect(RedisFrontier.open({ url: redis.url, name: "x", tls: { caFile: certs.ca } })).rejects.toThrow(/^tls: the certificate files are for a rediss:\/\/ URL/);
    await expect(RedisFrontier.open({ url: tlsUrl, name: "x", tls: { certFile: certs.clientCert } })).rejects.toThrow(/^tls: a client certificate and its key come together/);
  });

  it("takes the URL from REDIS_URL with --crawl-name and no --frontier, TLS files from the flags, and never prints the password", async () => {
    const tlsFlags = ["--frontier-ca", certs.ca, "--frontier-cert", certs.clientCert, "--frontier-key", certs.clientKey];
    const crawled = await runWithEnv(["--crawl-name", "from-env", ...tlsFlags, "--max-tasks", "4", demo.url], { REDIS_URL: tlsUrl });
    expect(crawled.code, crawled.stderr).toBe(0);
    expect(crawled.stdout).toMatch(/^frontier rediss:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0, crawl from-env: \d+ records in Redis/m);
    const status = await runWithEnv(["--crawl-name", "from-env", ...tlsFlags, "--status"], { REDIS_URL: tlsUrl });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^frontier rediss:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0, crawl from-env: finished$/m);
    for (const output of [crawled.stdout, crawled.stderr, status.stdout, status.stderr]) expect(output).not.toContain("tls-s3cret");
    const misplaced = await runWithEnv(["--frontier-ca", certs.ca, demo.url], {});
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("--frontier-ca needs --frontier URL");
  });
});
