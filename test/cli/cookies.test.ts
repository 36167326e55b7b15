/**
 * The `crawl` command's `--cookies`, `--cookie-file` and `--allowed-domain`:
 * a login crawled through with the jar, in every stage; a cookie file read
 * before the first request, and a bad one (or a bad domain) refused with
 * status 2, the flag and the file named, before the server sees any request.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlResultJson } from "../../src/cli/result-json.js";
import { FixtureSite } from "../../src/site/index.js";
import { linksHtml } from "../../src/site/html.js";
import { requireBuiltCli, runCli } from "./cli-process.js";

let site: FixtureSite;
let directory: string;
/** The `Cookie` header of each request the site received ("" when none came). */
let cookies: string[] = [];

/** Serves HTML with `status`. */
function html(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)), ...headers }).end(body);
}

beforeAll(async () => {
  requireBuiltCli();
  site = await FixtureSite.start();
  // "/" links /login, which sets the session and links /members; /members is a 403 without the session.
  site.addHandler("/", function root(request: IncomingMessage, response: ServerResponse) {
    cookies.push(request.headers.cookie ?? "");
    html(response, 200, linksHtml(["/login"]));
  });
  site.addHandler("/login", function login(request: IncomingMessage, response: ServerResponse) {
    cookies.push(request.headers.cookie ?? "");
    html(response, 200, linksHtml(["/members"]), { "Set-Cookie": "session=s3cret; Path=/; HttpOnly" });
  });
  site.addHandler("/members", function members(request: IncomingMessage, response: ServerResponse) {
    cookies.push(request.headers.cookie ?? "");
    html(response, request.headers.cookie === "session=s3cret" ? 200 : 403, "members\n");
  });
  directory = await mkdtemp(join(tmpdir(), "crawl-cookies-"));
});

afterAll(async () => {
  await site?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Crawls the site with `args` (`--json`, robots.txt not read) and returns each record's path and status. */
async function crawled(args: string[]): Promise<{ statuses: Array<[string, number | null]>; json: CrawlResultJson }> {
  site.resetCounters();
  cookies = [];
  const { code, stdout, stderr } = await runCli([...args, "--ignore-robots", "--max-tasks", "1", `${site.url}/`, "--json"]);
  expect(code, stderr).toBe(0);
  const json = JSON.parse(stdout) as CrawlResultJson;
  return { statuses: json.records.map((record) => [new URL(record.url).pathname, record.status]), json };
}

describe("crawl --cookies", () => {
  it.each(["callbacks", "generators", "asyncawait"])("logs in with --stage %s, and sends nothing without it", async (stage) => {
    const without = await crawled(["--stage", stage]);
    expect(without.statuses).toEqual([["/", 200], ["/login", 200], ["/members", 403]]);
    expect(cookies).toEqual(["", "", ""]);
    expect(without.json.options.cookies).toBe(false);

    const withJar = await crawled(["--stage", stage, "--cookies"]);
    expect(withJar.statuses).toEqual([["/", 200], ["/login", 200], ["/members", 200]]);
    expect(cookies).toEqual(["", "", "session=s3cret"]);
    expect(withJar.json.options.cookies).toBe(true);
    expect(JSON.stringify(withJar.json)).not.toContain("s3cret"); // the jar's cookies stay out of the output
  });
});

describe("crawl --cookie-file", () => {
  it("starts from the file's cookies (and implies --cookies)", async () => {
    const file = join(directory, "cookies.txt");
    await writeFile(file, "# Netscape HTTP Cookie File\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\ts3cret\n");
    const { statuses, json } = await crawled(["--cookie-file", file]);
    expect(statuses).toEqual([["/", 200], ["/login", 200], ["/members", 200]]);
    expect(cookies).toEqual(["session=s3cret", "session=s3cret", "session=s3cret"]);
    expect(json.options.cookies).toBe(true);
  });

  it.each([
    ["missing.txt", null, /^crawl: bad --cookie-file: expected `cookieFile` to be a readable file, got ".*missing\.txt" \(ENOENT: no such file or directory/],
    ["page.html", "<!doctype html>\n", /^crawl: bad --cookie-file: expected `cookieFile` to be a Netscape cookie file, got ".*page\.html": line 1 has 1 tab-separated fields/],
    ["flags.txt", "127.0.0.1\tYES\t/\tFALSE\t0\ta\t1\n", /^crawl: bad --cookie-file: .*flags\.txt": line 1: the subdomains flag "YES" is neither TRUE nor FALSE/],
  ])("refuses %s before any request, with status 2, naming the flag and the file", async (name, text, message) => {
    const file = join(directory, name);
    if (text !== null) await writeFile(file, text);
    site.resetCounters();
    const { code, stdout, stderr } = await runCli(["--cookie-file", file, `${site.url}/`]);
    expect(stderr).toMatch(message);
    expect(stderr).toContain("Try 'crawl --help'.");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(site.totalRequests).toBe(0);
  });
});

describe("crawl --allowed-domain", () => {
  it("passes each domain, repeated or comma-separated, into the crawl's options", async () => {
    const { json } = await crawled(["--allowed-domain", "Example.com", "--allowed-domains", "a.test, b.test"]);
    expect(json.options.allowedDomains).toEqual(["example.com", "a.test", "b.test"]);
    expect((await crawled([])).json.options.allowedDomains).toBeNull();
  });

  it.each([["--allowed-domain", "https://example.com/"], ["--allowed-domain", "example.com:8080"], ["--allowed-domains", ""]])(
    "refuses %s %j before any request, with status 2",
    async (flag, value) => {
      site.resetCounters();
      const { code, stderr } = await runCli([flag, value, `${site.url}/`]);
      expect(stderr).toMatch(/^crawl: bad --allowed-domain: expected `allowedDomains` to hold domains such as example\.com/);
      expect(code).toBe(2);
      expect(site.totalRequests).toBe(0);
    },
  );
});
