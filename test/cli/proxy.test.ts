/**
 * The `crawl` command's proxy: `--proxy`, `--no-proxy`, and the environment's
 * `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY`, which only the
 * command reads (and never for `--demo`); a bad value is a usage error
 * naming it; the password is printed nowhere. The child-process tests run
 * the built command (dist/cli.js) through a real forward proxy on 127.0.0.1.
 */
import { execFile } from "node:child_process";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseCommandLine, UsageError, type CommandLine } from "../../src/cli/command-line.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { startForwardProxy, type ForwardProxy } from "../helpers/forward-proxy.js";
import { CLI_PATH, requireBuiltCli, type CliOutcome } from "./cli-process.js";

/** The crawl command line `argv` reads with the environment `env`. */
function commandLine(argv: string[], env: Record<string, string> = {}): CommandLine {
  const invocation = parseCommandLine(argv, env);
  if (invocation.kind !== "crawl") throw new Error(`not a crawl: ${invocation.kind}`);
  return invocation.commandLine;
}

/** The usage error's message for `argv` with `env`. */
function usageError(argv: string[], env: Record<string, string> = {}): string {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error("no usage error");
}

/** The `proxy` of the crawl `argv` asks for, as JSON shows it (passwords masked). */
function proxyOf(argv: string[], env: Record<string, string> = {}): unknown {
  return JSON.parse(JSON.stringify(resolveOptions(commandLine(argv, env).crawlOptions).proxy));
}

describe("crawl's proxy flags and environment", () => {
  it("takes --proxy for both schemes and --no-proxy as one NO_PROXY list", () => {
    expect(proxyOf(["--proxy", "http://127.0.0.1:3128", "--no-proxy", "localhost,.internal.test", "http://127.0.0.1:1/"])).toEqual({
      http: "http://127.0.0.1:3128",
      https: "http://127.0.0.1:3128",
      noProxy: ["localhost,.internal.test"],
    });
  });

  it("reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY when --proxy is not given, lowercase names first", () => {
    const env = { HTTP_PROXY: "http://h.test:1", https_proxy: "http://s.test:2", HTTPS_PROXY: "http://ignored.test:3", NO_PROXY: "a.test" };
    expect(proxyOf(["http://127.0.0.1:1/"], env)).toEqual({ http: "http://h.test:1", https: "http://s.test:2", noProxy: ["a.test"] });
    expect(proxyOf(["http://127.0.0.1:1/"], { ALL_PROXY: "http://all.test:4" })).toEqual({ http: "http://all.test:4", https: "http://all.test:4", noProxy: [] });
    expect(proxyOf(["--no-proxy", "b.test", "http://127.0.0.1:1/"], env)).toEqual({ http: "http://h.test:1", https: "http://s.test:2", noProxy: ["b.test"] });
  });

  it("lets --proxy win over the environment, and --proxy '' turn the proxy off", () => {
    const env = { HTTP_PROXY: "http://h.test:1" };
    expect(proxyOf(["--proxy", "http://p.test:9", "http://127.0.0.1:1/"], env)).toMatchObject({ http: "http://p.test:9" });
    expect(proxyOf(["--proxy", "", "http://127.0.0.1:1/"], env)).toBeNull();
  });

  it("never takes a proxy from the environment for --demo, and takes one given with --proxy", () => {
    expect(proxyOf(["--demo"], { HTTP_PROXY: "http://h.test:1", https_proxy: "not a url" })).toBeNull();
    expect(proxyOf(["--demo", "--proxy", "http://p.test:9"])).toMatchObject({ http: "http://p.test:9" });
  });

  it("refuses a bad --proxy or a bad variable, naming it, the password masked", () => {
    expect(usageError(["--proxy", "socks5://u:hunter2@127.0.0.1:1080", "a.com"])).toBe(
      'bad --proxy: expected `proxy` to be an http:// proxy URL such as http://127.0.0.1:3128, got "socks5://u:***@127.0.0.1:1080"',
    );
    expect(usageError(["a.com"], { https_proxy: "https://u:hunter2@p.test" })).toMatch(/^bad https_proxy in the environment: expected `https_proxy` to be an http:\/\/ proxy URL, got "https:\/\/u:\*\*\*@p.test\/"/);
    expect(usageError(["a.com"], { HTTP_PROXY: "p.test:3128" })).toMatch(/^bad HTTP_PROXY in the environment/);
  });
});

/** Runs the built command with exactly the environment `env` (and PATH). */
function runCliWith(args: readonly string[], env: Record<string, string>): Promise<CliOutcome> {
  return new Promise(function run(resolve, reject) {
    execFile(process.execPath, [CLI_PATH, ...args], { timeout: 45_000, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } }, function exited(error, stdout, stderr) {
      if (error !== null && typeof error.code !== "number") {
        reject(new Error(`crawl ${args.join(" ")} did not exit by itself: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
    });
  });
}

describe("crawl through a forward proxy (dist/cli.js)", () => {
  let site: FixtureSite;
  let proxy: ForwardProxy;

  beforeAll(requireBuiltCli);

  afterEach(async () => {
    await proxy.connectionsClosed();
    await Promise.all([proxy.close(), site.close()]);
  });

  async function start(auth?: string): Promise<string> {
    site = await FixtureSite.start();
    site.addPage("/", ["/a"]);
    site.addPage("/a", []);
    proxy = await startForwardProxy(auth === undefined ? {} : { auth });
    return `${site.url}/`;
  }

  it("sends every request through --proxy with its credentials, and prints the password nowhere", async () => {
    const root = await start("bot:hunter2");
    const { code, stdout, stderr } = await runCliWith(["--json", "-", "-vv", "--stage", "generators", "--proxy", `http://bot:hunter2@127.0.0.1:${proxy.port}`, root, "--trace"], {});
    expect(code).toBe(0);
    expect(proxy.requests.toSorted()).toEqual([`${site.url}/`, `${site.url}/a`, `${site.url}/robots.txt`]);
    expect(JSON.parse(stdout).options.proxy).toEqual({ http: `http://bot:***@127.0.0.1:${proxy.port}`, https: `http://bot:***@127.0.0.1:${proxy.port}`, noProxy: [] });
    expect(stdout + stderr).not.toMatch(/hunter2|Ym90Omh1bnRlcjI/); // the password, and bot:hunter2 in base64
  });

  it("takes HTTP_PROXY from the environment, and NO_PROXY bypasses it", async () => {
    const root = await start();
    expect((await runCliWith(["-q", root], { HTTP_PROXY: proxy.url })).code).toBe(0);
    expect(proxy.requests).toHaveLength(3);
    expect((await runCliWith(["-q", root], { HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" })).code).toBe(0);
    expect(proxy.requests).toHaveLength(3);
  });

  it("crawls --demo directly, whatever proxy the environment names", async () => {
    await start();
    const { code } = await runCliWith(["--demo", "-q", "--max-pages", "3"], { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url });
    expect(code).toBe(0);
    expect(proxy.requests).toEqual([]);
  });

  it("exits with 2 naming --proxy for a bad value, the password masked", async () => {
    await start();
    const { code, stdout, stderr } = await runCliWith(["--proxy", "ftp://bot:hunter2@127.0.0.1:2121", "a.com"], {});
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe('crawl: bad --proxy: expected `proxy` to be an http:// proxy URL such as http://127.0.0.1:3128, got "ftp://bot:***@127.0.0.1:2121/"\nTry \'crawl --help\'.\n');
  });
});
