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

const { values } = parseArgs({
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
  },
});

const synthetic = await SyntheticSite.start(
  {
    pages: Number(values.pages),
    linksPerPage: Number(values.links),
    seed: Number(values.seed),
    delayMs: Number(values.delay),
    redirects: Number(values.redirects),
    notFound: Number(values["not-found"]),
  },
  { port: Number(values.port) },
);
const { records, maxDepth } = synthetic.expected;
const expected = values["count-only"] ? { count: records.length, maxDepth } : { count: records.length, maxDepth, records };
const bound = synthetic.latencyBound(Number(values["max-tasks"]));
process.stdout.write(`${JSON.stringify({ url: synthetic.url, expected, bound })}\n`);

async function shutDown(): Promise<void> {
  await synthetic.close();
  process.exit(0);
}
process.once("SIGTERM", shutDown);
process.once("SIGINT", shutDown);
process.stdin.once("close", shutDown);
process.stdin.resume();
