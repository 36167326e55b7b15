/**
 * Runs a synthetic site in its own process, for the benchmark (so the server
 * does not share the crawler's event loop).
 *
 * `tsx src/site/cli.ts --pages 2000 --links 10 --seed 1 --delay 0 [--port 0] [--redirects 0] [--not-found 0] [--max-tasks 10] [--count-only]`
 *
 * When listening it prints one JSON line to stdout:
 * `{ "url": "http://127.0.0.1:PORT/", "expected": { "count", "maxDepth", "records" }, "bound": ms }`,
 * where `bound` is {@link SyntheticSite.latencyBound} for `--max-tasks` workers.
 * With `--count-only`, `expected` has no `records`: at a million pages they
 * would make a line of about 225 MB, and a benchmark that checks only the
 * number of records (S5) has no use for them.
 * It exits on SIGTERM or SIGINT, or when its stdin closes (so it dies with
 * the process that piped it; give it a pipe, not /dev/null).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { SyntheticSite } from "./synthetic-site.js";

const USAGE = `usage: npm run site -- [--pages N] [--links N] [--seed N] [--delay MS] [--port N]
       [--redirects N] [--not-found N] [--max-tasks N] [--count-only]
Serves a synthetic site on 127.0.0.1 and prints one JSON line: its URL, the crawl
it expects, and the latency bound for --max-tasks workers. Stops when stdin closes.
`;

/** Exits with status 2 and the usage, after saying what is wrong. */
function usageError(message: string): never {
  process.stderr.write(`site: ${message}\n${USAGE}`);
  process.exit(2);
}

let parsed: ReturnType<typeof readArguments>;
try {
  parsed = readArguments();
} catch (error) {
  usageError(error instanceof Error ? error.message : String(error));
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

function readArguments() {
  return parseArgs({
    options: {
      pages: { type: "string", default: "2000" },
      links: { type: "string", default: "10" },
      seed: { type: "string", default: "1" },
      delay: { type: "string", default: "0" },
      port: { type: "string", default: "0" },
      redirects: { type: "string", default: "0" },
      "not-found": { type: "string", default: "0" },
      "max-tasks": { type: "string", default: "10" },
      "count-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
}

/** The option's value as a whole number of at least 0 (the delay may have a fraction of a ms); else a usage error. */
function count(name: "pages" | "links" | "seed" | "delay" | "port" | "redirects" | "not-found" | "max-tasks"): number {
  const text = values[name];
  const value = Number(text);
  const fits = text.trim() !== "" && Number.isFinite(value) && value >= 0 && (name === "delay" || Number.isInteger(value));
  if (!fits) usageError(`--${name} must be ${name === "delay" ? "a number of ms" : "a whole number"} of 0 or more, not ${JSON.stringify(text)}`);
  return value;
}

const synthetic = await SyntheticSite.start(
  {
    pages: count("pages"),
    linksPerPage: count("links"),
    seed: count("seed"),
    delayMs: count("delay"),
    redirects: count("redirects"),
    notFound: count("not-found"),
  },
  { port: count("port") },
);
const { records, maxDepth } = synthetic.expected;
const expected = values["count-only"] ? { count: records.length, maxDepth } : { count: records.length, maxDepth, records };
const bound = synthetic.latencyBound(count("max-tasks"));
process.stdout.write(`${JSON.stringify({ url: synthetic.url, expected, bound })}\n`);

async function shutDown(): Promise<void> {
  await synthetic.close();
  process.exit(0);
}
process.once("SIGTERM", shutDown);
process.once("SIGINT", shutDown);
process.stdin.once("close", shutDown);
process.stdin.resume();
