/**
 * A crawl whose trace nothing shows subscribes to no channel of undici's, nor
 * to the hand-made loops': the progress and stats lines read the crawl's
 * fetch events off its own channel (issue 39). Each run is the built `crawl`
 * with its stderr a pipe (where the stats lines are on), preloaded with
 * channel-log.mjs, which lists every channel subscribed to.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/index.js";
import { CLI_PATH, requireBuiltCli } from "./cli-process.js";

const PRELOAD = fileURLToPath(new URL("channel-log.mjs", import.meta.url));

let site: FixtureSite;
let folder: string;

beforeAll(async () => {
  requireBuiltCli();
  folder = await mkdtemp(join(tmpdir(), "untraced-crawl-"));
  site = await FixtureSite.start();
  site.addPage("/", ["/a", "/b"]).addPage("/a", ["/"]).addPage("/b", []);
});

afterAll(async () => {
  await site?.close();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

let runs = 0;

/** Runs `node dist/cli.js ...args` with the channel log; resolves with its exit code and the channels subscribed to, each once. */
async function channelsSubscribed(args: readonly string[]): Promise<{ code: number; channels: string[] }> {
  runs += 1;
  const log = join(folder, `channels-${runs}.log`);
  const code = await new Promise<number>(function run(resolve, reject) {
    const env = { ...process.env, CHANNEL_LOG: log };
    execFile(process.execPath, ["--import", PRELOAD, CLI_PATH, ...args], { env, timeout: 30_000 }, function exited(error) {
      if (error !== null && typeof error.code !== "number") reject(error);
      else resolve(error === null ? 0 : Number(error.code));
    });
  });
  const text = await readFile(log, "utf8").catch(function none(): string {
    return "";
  });
  return { code, channels: [...new Set(text.split("\n").filter(Boolean))].sort() };
}

describe("a crawl nothing traces", () => {
  it.each(["callbacks", "generators", "asyncawait"] as const)("in stage %s subscribes to the crawl's own channel only, for the stats lines", async (stage) => {
    const { code, channels } = await channelsSubscribed(["--stage", stage, "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(channels).toEqual(["coroutine-crawler:crawl"]);
  });

  it("subscribes to no channel at all without the stats lines", async () => {
    const { code, channels } = await channelsSubscribed(["--stage", "asyncawait", "-q", "--stats-interval", "0", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(channels).toEqual([]);
  });
});

describe("a traced crawl", () => {
  it("in stage 3 subscribes to undici's request channels as well", async () => {
    const { code, channels } = await channelsSubscribed(["--stage", "asyncawait", "-q", "--trace", join(folder, "trace.txt"), site.urlFor("/")]);
    expect(code).toBe(0);
    expect(channels).toEqual(expect.arrayContaining(["coroutine-crawler:crawl", "undici:request:create", "undici:request:headers"]));
  });
});
