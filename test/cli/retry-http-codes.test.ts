/**
 * `--retry-http-codes LIST`: the statuses the crawl tries again, as the
 * library's `retryHttpCodes`, and the usage errors of a bad list.
 */
import { describe, expect, it } from "vitest";
import { parseCommandLine, UsageError } from "../../src/cli/command-line.js";
import { USAGE } from "../../src/cli/flags.js";
import type { CrawlOptions } from "../../src/crawl/options.js";

function crawlOptions(argv: string[]): CrawlOptions {
  const invocation = parseCommandLine(argv);
  if (invocation.kind !== "crawl") throw new Error(`expected a crawl, got ${invocation.kind}`);
  return invocation.commandLine.crawlOptions;
}

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

describe("--retry-http-codes", () => {
  it("reads a comma-separated list of statuses, spaces allowed", () => {
    expect(crawlOptions(["--retry-http-codes", "500,503", "a.com"]).retryHttpCodes).toEqual([500, 503]);
    expect(crawlOptions(["--retry-http-codes=429, 500", "a.com"]).retryHttpCodes).toEqual([429, 500]);
  });

  it("turns status retries off when empty", () => {
    expect(crawlOptions(["--retry-http-codes", "", "a.com"]).retryHttpCodes).toEqual([]);
    expect(crawlOptions(["--retry-http-codes=", "a.com"]).retryHttpCodes).toEqual([]);
  });

  it("leaves the library's default when not given", () => {
    expect(crawlOptions(["a.com"]).retryHttpCodes).toBeUndefined();
  });

  it("refuses what is not a list of statuses, naming the flag", () => {
    expect(usageError(["--retry-http-codes", "500,abc", "a.com"])).toBe("--retry-http-codes expects HTTP statuses separated by commas, got '500,abc'");
    expect(usageError(["--retry-http-codes", "500,,503", "a.com"])).toBe("--retry-http-codes expects HTTP statuses separated by commas, got '500,,503'");
    expect(usageError(["--retry-http-codes", "500,700", "a.com"])).toBe(
      "bad --retry-http-codes: expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 500,700",
    );
  });

  it("is in --help with its default", () => {
    expect(USAGE).toContain("--retry-http-codes LIST");
    expect(USAGE).toContain("(default 408,429,500,502,503,504,522,524)");
  });
});
