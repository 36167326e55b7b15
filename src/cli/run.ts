/**
 * The `crawl` command from parsed arguments to exit status: runs one stage or
 * all three, prints the live lines, the progress, the report or the
 * comparison, and writes the JSON and the JSON Lines.
 *
 * All the printing of the project lives here and in the other `src/cli`
 * files; the library itself never prints.
 *
 * @module
 */
import { writeFile } from "node:fs/promises";
import type { CrawlItem } from "../crawl/page-hook.js";
import type { CrawlResult, FetchStatistic } from "../crawl/records.js";
import { resolveOptions } from "../crawl/options.js";
import type { CrawlOptions } from "../crawl/options.js";
import { report, Stats, urlLine } from "../crawl/report.js";
import { checkState, StateError, type StateContents } from "../crawl/state.js";
import { FETCH_ERRORS, type FetchError } from "../kernel/errors.js";
import type { RedisFrontier } from "../distributed/redis-frontier.js";
import type { FetchEndEvent, StageName, TraceEvent } from "../observe/events.js";
import type { SyntheticSite } from "../site/index.js";
import type { TimelinePanel } from "../observe/timeline/index.js";
import { TraceLines } from "../observe/trace-lines.js";
import { UrlTrace } from "../observe/trace-url.js";
import { readCommandLine, UsageError } from "./command-line.js";
import type { CommandLine, FrontierFlags } from "./command-line.js";
import { STAGE_NAMES, USAGE_HINT, usage, versionText } from "./flags.js";
import { comparisonTable, firstDifference } from "./compare.js";
import type { StageRun } from "./compare.js";
import { crawlMissing, frontierLine, statusText } from "./frontier-status.js";
import { Interrupt, signalExitStatus } from "./interrupt.js";
import type { StopSignal } from "./interrupt.js";
import { itemsCsv, itemsJson, writeWhole } from "./item-files.js";
import { unwritable } from "./outputs.js";
import { Printer } from "./printer.js";
import { countFetches, CrawlCounters, ProgressLine, StatsLines } from "./progress-line.js";
import { RecordLines } from "./record-lines.js";
import { writeStreamedJson } from "./streamed-json.js";
import { jsonDocument, resultJson } from "./result-json.js";
import { keepFreedMemory } from "./freed-memory.js";
import { setCrawlFlags } from "./v8-flags.js";
import type { ComparisonJson, CrawlResultJson } from "./result-json.js";

/** Exit statuses of the `crawl` command. */
export const EXIT = {
  /** The crawl finished (error records included). */
  ok: 0,
  /** `--compare` found a difference, Redis could not be used (`--frontier`), or the command failed. */
  failed: 1,
  /** The command line could not be run. */
  usage: 2,
  /** Nothing was fetched: every root ended in an error record (in every stage, with `--compare`). */
  nothingFetched: 3,
  /** Ctrl-C: 128 + SIGINT's number, as shells report it. */
  interrupted: 130,
  /** SIGTERM (`kill`, `timeout`, `docker stop`, systemd): 128 + 15. */
  terminated: 143,
  /** SIGHUP (the terminal closed): 128 + 1. */
  hangUp: 129,
} as const;

/** A stage's `crawl`, given a frontier by stage 3 alone. */
type StageCrawl = (roots: string[], options: CrawlOptions, frontier?: RedisFrontier) => Promise<CrawlResult>;

/**
 * The three stages' `crawl` functions, by name, for `--stage` and `--compare`,
 * each imported when it is first run: a command loads only the stage it runs
 * (stage 1 or 2 never loads undici), and `--help` none (docs/benchmarks.md,
 * start-up).
 */
const STAGES: Readonly<Record<StageName, () => Promise<StageCrawl>>> = {
  async callbacks() {
    return (await import("../callbacks/index.js")).crawl;
  },
  async generators() {
    return (await import("../generators/index.js")).crawl;
  },
  async asyncawait() {
    return (await import("../asyncawait/index.js")).crawl;
  },
};

/**
 * Runs the command for `argv` (the arguments after the script) and resolves
 * with the exit status; it never calls `process.exit` itself.
 */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const invocation = await readCommandLine(argv);
    if (invocation.kind === "help") {
      process.stdout.write(usage());
      return EXIT.ok;
    }
    if (invocation.kind === "version") {
      process.stdout.write(versionText());
      return EXIT.ok;
    }
    return await runCommand(invocation.commandLine);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`crawl: ${error.message}\n${USAGE_HINT}\n`);
    return EXIT.usage;
  }
}

/** What watches a crawl: the `--trace` lines and the `--timeline` panels of its trace, the `--jsonl` lines and CSV rows of its records. */
interface Watchers {
  /** Where `--trace` (or `--trace-url`) lines go, or null. */
  lines: TraceLines | null;
  /** One panel per stage run, filled when `--timeline` is given; null otherwise. */
  panels: TimelinePanel[] | null;
  /** Where `--jsonl` writes each record, or null. */
  recordLines: RecordLines | null;
  /** Where `-o FILE.csv` writes each record, or null. */
  csvLines: RecordLines | null;
  /** Where `-o items.jsonl` writes each item, or null. */
  itemLines: RecordLines | null;
  /** The items of the stage running, kept for `-o items.csv` and `-o items.json` (written at the end) when no result keeps them; null when neither is asked for. */
  items: CrawlItem[] | null;
  /** Items made by the stage running, wherever they went. */
  itemCount: number;
}

/** The files written as the crawl goes, opened before it starts. */
interface OpenedOutputs {
  /** `--jsonl` (or `-o FILE.jsonl`), or null. */
  recordLines: RecordLines | null;
  /** `-o FILE.csv`, or null. */
  csvLines: RecordLines | null;
  /** `-o items.jsonl`, or null. */
  itemLines: RecordLines | null;
}

/**
 * Checks every output file and opens the ones written as the crawl goes,
 * before anything is fetched (or Redis is opened): a file that cannot be
 * written is a usage error now, not a message after a long crawl.
 *
 * @throws {@link UsageError} naming the flag, the file and why.
 */
function openOutputs(commandLine: CommandLine): OpenedOutputs {
  const files: [string, string | null][] = [
    ["--json", commandLine.json],
    ["--jsonl", commandLine.jsonl],
    ["-o", commandLine.csv],
    ["--trace", commandLine.trace],
    ["--timeline", commandLine.timeline],
    ["-o", commandLine.itemFiles.jsonl],
    ["-o", commandLine.itemFiles.csv],
    ["-o", commandLine.itemFiles.json],
  ];
  for (const [flag, file] of files) {
    const why = file === null ? null : unwritable(file);
    if (why !== null) throw new UsageError(`cannot write ${flag} ${file}: ${why}`);
  }
  const opened: OpenedOutputs = { recordLines: null, csvLines: null, itemLines: null };
  try {
    if (commandLine.jsonl !== null) opened.recordLines = openLines("--jsonl", commandLine.jsonl, "jsonl");
    if (commandLine.csv !== null) opened.csvLines = openLines("-o", commandLine.csv, "csv");
    if (commandLine.itemFiles.jsonl !== null) opened.itemLines = openLines("-o", commandLine.itemFiles.jsonl, "jsonl");
  } catch (error) {
    opened.recordLines?.close();
    opened.csvLines?.close();
    throw error;
  }
  return opened;
}

/** Writes a record's `--jsonl` line and CSV row, whichever are asked for; false when one could not be written (which stops the crawl). */
function writeRecordLines(outputs: OpenedOutputs, record: FetchStatistic): boolean {
  return (outputs.recordLines?.write(record) ?? true) && (outputs.csvLines?.write(record) ?? true);
}

/** {@link RecordLines.open}, its error a usage error that names the flag. */
function openLines(flag: string, file: string, format: "jsonl" | "csv"): RecordLines {
  try {
    return RecordLines.open(file, format);
  } catch (error) {
    throw new UsageError(`cannot write ${flag} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Runs the command, once its output files are checked and opened (before
 * Redis is, and before any request; they are closed at the end): with
 * `--frontier`, after opening the crawl's frontier in
 * Redis (and always closing it); with `--status`, only prints the crawl's
 * state. When Redis cannot be reached, or stops answering during the crawl,
 * prints the frontier's message (what was written is kept, and running again
 * resumes) and fails with status 1, without a stack trace.
 *
 * @remarks The Redis frontier, and with it the Redis client, is loaded only
 * when `--frontier` is given.
 */
async function runCommand(commandLine: CommandLine): Promise<number> {
  const flags = commandLine.frontier;
  const outputs: OpenedOutputs = commandLine.status ? { recordLines: null, csvLines: null, itemLines: null } : openOutputs(commandLine);
  try {
    if (flags === null) {
      try {
        return await crawlCommand(commandLine, outputs, null);
      } catch (error) {
        if (!(error instanceof StateError)) throw error;
        process.stderr.write(`crawl: ${error.message}\n`); // --state: the log could not be written; the crawl stopped.
        return EXIT.failed;
      }
    }
    const { FrontierError, RedisFrontier } = await import("../distributed/redis-frontier.js");
    try {
      // This process's --jsonl and CSV lines are written before Redis marks each record's URL (the frontier's journal): a kill -9 loses none.
      const journaled = outputs.recordLines !== null || outputs.csvLines !== null;
      const journal = journaled ? function writeLines(record: FetchStatistic): boolean { return writeRecordLines(outputs, record); } : null;
      // A Redis silent for 5 s is said on stderr (and again at 10, 20, … s), as is its answering again.
      const frontier = await RedisFrontier.open({ ...flags, journal, onWarning: function warnOfRedis(message) { process.stderr.write(`crawl: ${message}\n`); } });
      try {
        return commandLine.status ? await printStatus(flags, frontier) : await crawlCommand(commandLine, outputs, frontier);
      } finally {
        await frontier.close();
      }
    } catch (error) {
      if (!(error instanceof FrontierError)) throw error;
      process.stderr.write(`crawl: ${error.message}\n`);
      return EXIT.failed;
    }
  } finally {
    outputs.recordLines?.close();
    outputs.csvLines?.close();
    outputs.itemLines?.close();
  }
}

/** `--status`: the crawl's state as Redis holds it now. */
async function printStatus(flags: FrontierFlags, frontier: RedisFrontier): Promise<number> {
  const status = await frontier.status();
  if (crawlMissing(status)) {
    process.stderr.write(`crawl: ${statusText(flags, status)}`); // No such crawl: a script polling --status must not take it for one finished.
    return EXIT.failed;
  }
  process.stdout.write(statusText(flags, status));
  return EXIT.ok;
}

/** Starts the demo site if asked, runs the stage or stages (with `frontier`, stage 3 on it), prints, and cleans up. */
async function crawlCommand(commandLine: CommandLine, outputs: OpenedOutputs, frontier: RedisFrontier | null): Promise<number> {
  const kept = keptState(commandLine);
  const dataToStdout = commandLine.json === "-" || commandLine.jsonl === "-";
  const printer = new Printer(dataToStdout ? process.stderr : process.stdout, process.stderr);
  const { recordLines, csvLines, itemLines } = outputs;
  const interrupt = new Interrupt(
    function interrupted(signal: StopSignal) {
      printer.warn(signal === "SIGINT" ? "Interrupted\n" : `Interrupted by ${signal}\n`);
    },
    function interruptedAgain(signal: StopSignal) {
      printer.progress?.stop();
      process.exit(signalExitStatus(signal));
    },
  );
  interrupt.listen();
  let demo: SyntheticSite | null = null;
  const watchers: Watchers = {
    // --trace-url alone writes to stderr, as a bare --trace does.
    lines: commandLine.trace === null && commandLine.traceUrl === null ? null : new TraceLines(commandLine.trace ?? "-", printer),
    panels: commandLine.timeline === null ? null : [],
    recordLines,
    csvLines,
    itemLines,
    items: null,
    itemCount: 0,
  };
  try {
    if (commandLine.demo) demo = await (await import("../site/index.js")).startDemoSite();
    const roots = demo === null ? commandLine.roots : [demo.url];
    const stages = commandLine.compare ? STAGE_NAMES : [commandLine.stage];
    // Every stage to run is loaded before the first crawl sets V8's flags (src/cli/v8-flags.ts).
    for (const stage of stages) await STAGES[stage]();
    setCrawlFlags();
    keepFreedMemory();
    const runs: StageRun[] = [];
    for (const stage of stages) {
      // After Ctrl-C no further stage starts; the first always runs (an aborted
      // signal gives an empty crawl), so there is a result to report.
      if (interrupt.interrupted && runs.length > 0) break;
      // The server's own count of requests in flight, per stage.
      demo?.site.resetCounters();
      const run = await runStage(stage, roots, commandLine, printer, interrupt, watchers, frontier);
      runs.push({ ...run, serverPeak: demo === null ? null : demo.site.peakRequestsInFlight });
    }
    let status = await finish(commandLine, roots, runs, printer, interrupt.received, watchers, frontier);
    if (commandLine.crawlOptions.state !== undefined && runs[0] !== undefined) printer.print(stateLine(commandLine.crawlOptions, kept, runs[0].result));
    if (commandLine.timeline !== null && watchers.panels !== null) {
      const written = await writeTimeline(commandLine.timeline, watchers.panels, printer);
      if (!written && status === EXIT.ok) status = EXIT.failed;
    }
    const traceWritten = (await watchers.lines?.close()) ?? true;
    return !traceWritten && status === EXIT.ok ? EXIT.failed : status;
  } finally {
    await watchers.lines?.close(); // Closes once: after an exception, this is the first call.
    interrupt.dispose();
    await demo?.close();
  }
}

/**
 * `--state DIR`: what DIR holds, before anything is opened or fetched.
 *
 * @throws UsageError when DIR holds another crawl (the difference named) or is in use.
 */
function keptState(commandLine: CommandLine): StateContents | null {
  const dir = commandLine.crawlOptions.state;
  if (dir === undefined) return null;
  try {
    return checkState(dir, commandLine.roots, commandLine.crawlOptions);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(`--${error.message}`);
    throw error;
  }
}

/**
 * The line after the report that says what `--state DIR` holds now, and how
 * to go on: run again to resume, with a larger `--max-pages` when that
 * stopped it (it counts the pages of every run), or start afresh.
 */
function stateLine(options: CrawlOptions, before: StateContents | null, result: CrawlResult): string {
  const dir = options.state as string;
  const maxPages = options.maxPages ?? Infinity;
  if (before !== null && before.seen > 0 && before.todo === 0) {
    return `state ${dir}: this crawl had already finished (${before.recorded} records), nothing fetched; to crawl afresh, delete ${dir} or give another --state\n`;
  }
  if (before !== null && before.seen > 0 && before.pages >= maxPages) {
    return `state ${dir}: this crawl had already fetched ${before.pages} pages, --max-pages ${maxPages}: nothing fetched; give a larger --max-pages to go on (${before.todo} URLs to do)\n`;
  }
  const resumed = before === null ? "" : `, ${before.recorded} of them from before`;
  let again = ": the crawl is finished";
  if (result.stoppedBy === "maxPages") again = `, ${result.todo} URLs to do: stopped at --max-pages ${maxPages}; run it again with a larger --max-pages to go on`;
  else if (result.todo > 0) again = `, ${result.todo} URLs to do: run the same command again to resume`;
  return `state ${dir}: ${result.recorded} records${resumed}${again}\n`;
}

/** One stage's crawl, with the counters, the progress line and the `-v` lines wired in; with a frontier, stage 3 on it. */
async function runStage(
  stage: StageName,
  roots: string[],
  commandLine: CommandLine,
  printer: Printer,
  interrupt: Interrupt,
  watchers: Watchers,
  frontier: RedisFrontier | null,
): Promise<Omit<StageRun, "serverPeak">> {
  const signal = interrupt.signal;
  const counters = new CrawlCounters(Date.now());
  const progress = new ProgressLine(process.stderr, counters, stage);
  printer.progress = progress;
  const stats = new StatsLines(writeStats, counters, commandLine.statsIntervalMs, commandLine.compare ? stage : "", progress.enabled);
  const prefix = commandLine.compare ? `${stage}: ` : "";
  const verbosity = commandLine.verbosity;
  const { lines, recordLines, csvLines, itemLines } = watchers;
  const { itemFiles, scriptOnItem } = commandLine;
  watchers.items = itemFiles.csv !== null || itemFiles.json !== null ? [] : null;
  watchers.itemCount = 0;
  const items = watchers.items;
  const events: TraceEvent[] | null = watchers.panels === null ? null : [];
  // --trace-url: only the matching URLs' lines, each stage's followed on its own.
  const follow = commandLine.traceUrl === null ? null : new UrlTrace(commandLine.traceUrl, writeLine);

  function onRecord(record: FetchStatistic): void {
    counters.onRecord(record);
    if (frontier?.journaled !== true) writeRecordLines(watchers, record); // With a frontier, written already, before Redis marked it (its journal).
    follow?.record(record);
    if (verbosity >= 2) printer.print(`${prefix}${urlLine(record, { referrer: true })}\n`);
    progress.update();
  }
  function onItem(item: CrawlItem): void {
    watchers.itemCount += 1;
    try {
      recordLines?.writeItem(item);
      itemLines?.writeItem(item);
    } catch (error) {
      // JSON cannot write it (a cycle, a BigInt): say so, and go on with the others.
      printer.warn(`crawl: an item of ${item.url} cannot be written as JSON: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    items?.push(item);
    try {
      scriptOnItem?.(item);
    } catch (error) {
      printer.warn(`crawl: the --script's onItem threw on an item of ${item.url}: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
  function writeLine(line: string): void {
    lines?.writeLine(line);
  }
  function redraw(): void {
    progress.update();
  }
  function writeStats(line: string): void {
    printer.warn(line);
  }
  function trace(event: TraceEvent): void {
    if (verbosity >= 3 && event.type === "fetch-end") printer.print(`${prefix}${attemptLine(event)}\n`);
    if (follow !== null) follow.trace(event);
    else lines?.write(event);
    events?.push(event);
  }

  // A --jsonl or CSV file that can no longer be written stops the crawl: its records would go nowhere.
  const failures = [recordLines?.failed, csvLines?.failed, itemLines?.failed].filter((failed) => failed !== undefined);
  const stop = failures.length === 0 ? signal : AbortSignal.any([signal, ...failures]);
  // SIGTERM: the fetches in flight finish first, for a few seconds (src/cli/interrupt.ts).
  const options: CrawlOptions = { ...commandLine.crawlOptions, onRecord, signal: stop, finishSignal: interrupt.finishing };
  // The items come to the outputs as they are made, whatever the result keeps.
  if (commandLine.crawlOptions.onPage !== undefined) options.onItem = onItem;
  // The records stay in Redis, to be streamed to --json at the end: none is kept in memory.
  if (streamsJson(commandLine, frontier)) options.keepRecords = false;
  // Tracing costs a little, so it is asked for only when something shows it: the
  // progress and stats lines and --compare's figures read the fetch events off the
  // crawl's own channel, and an untraced stage-3 crawl subscribes to none of undici's.
  const watched = lines !== null || events !== null;
  if (verbosity >= 3 || watched) options.trace = trace;
  const stopCounting = progress.enabled || stats.enabled || commandLine.compare ? countFetches(counters, redraw) : null;
  if (events !== null) {
    watchers.panels?.push({ stage, events, maxTasks: resolveOptions(commandLine.crawlOptions).maxTasks });
  }
  stats.start();
  try {
    // --frontier comes with stage 3 only (a usage error otherwise).
    const crawl = await STAGES[stage]();
    const result = await crawl(roots, options, frontier ?? undefined);
    follow?.end();
    return { stage, result, stats: counters.stats, peakInFlight: counters.peakInFlight };
  } finally {
    stopCounting?.();
    stats.stop();
    progress.stop();
    printer.progress = null;
  }
}

/**
 * Prints the report or the comparison, writes the JSON, and picks the exit
 * status: 128 + the signal's number after a stop signal (130 for Ctrl-C); 1
 * when the stages differ, or when the `--jsonl` lines or CSV rows could not
 * all be written (which stopped the crawl); 3 when no root
 * got a response (a crawl that fetched nothing is not a success, nor a
 * comparison). With a frontier, the report (every process's records) is
 * followed by a line saying so, and what this process recorded.
 */
async function finish(
  commandLine: CommandLine,
  roots: readonly string[],
  runs: readonly StageRun[],
  printer: Printer,
  signal: StopSignal | null,
  watchers: Watchers,
  frontier: RedisFrontier | null,
): Promise<number> {
  const interrupted = signal !== null;
  const { recordLines } = watchers;
  let status: number = signal === null ? EXIT.ok : signalExitStatus(signal);
  let identical = true;
  const nothingFetched = !interrupted && runs.every(fetchedNothing);
  if (commandLine.compare) {
    const maxTasks = runs[0]?.result.options.maxTasks ?? commandLine.crawlOptions.maxTasks;
    printer.print(`Each stage crawled ${roots.join(" ")} in turn, with maxTasks ${maxTasks}:\n\n`);
    printer.print(comparisonTable(runs));
    const difference = firstDifference(runs);
    identical = difference === null;
    if (interrupted) {
      printer.print(`interrupted after ${runs.length} of ${STAGE_NAMES.length} stages: not compared\n`);
    } else if (difference === null && nothingFetched) {
      printer.print(`nothing fetched: no root got a response in any of the ${runs.length} stages${rootFailures(runs, "table")}\n`);
      status = EXIT.nothingFetched;
    } else if (difference === null) {
      printer.print(`identical: the ${runs.length} stages made the same records\n`);
      if (commandLine.demo) {
        printer.print("\nNext: add --timeline timeline.html to see how each stage waited, or crawl one stage\n");
        printer.print("with --stage callbacks -v; README.md gives the order in which to read the code.\n");
      }
    } else {
      printer.print(`different: ${difference}\n`);
      status = EXIT.failed;
    }
  } else {
    // With --jsonl no record was kept: the report counts them from the stats and says where they went.
    const streamed = streamsJson(commandLine, frontier) ? commandLine.json : null;
    const recordsIn = recordLines?.destination ?? streamed ?? undefined;
    for (const run of runs) {
      const verbosity = commandLine.verbosity;
      printer.print(report(run.result, { quiet: verbosity === 0, verbose: verbosity >= 2, stats: run.stats, recordsIn: recordsIn === "-" ? "stdout" : recordsIn }));
      if (frontier !== null && commandLine.frontier !== null) {
        printer.print(frontierLine(commandLine.frontier, frontier.owner, run.result.recorded, run.stats.records, interrupted));
      }
    }
    if (nothingFetched) {
      printer.warn(`crawl: nothing fetched: no root got a response${rootFailures(runs, "report")}\n`);
      status = EXIT.nothingFetched;
    }
  }
  if (commandLine.givesItems && !commandLine.compare) {
    printer.print(`${watchers.itemCount} item${watchers.itemCount === 1 ? "" : "s"} extracted${commandLine.crawlOptions.state === undefined ? "" : " in this run"}\n`);
  }
  for (const lines of [recordLines, watchers.csvLines, watchers.itemLines]) {
    if (lines === null || lines.failure === null) continue;
    const written = lines === watchers.itemLines ? `${lines.itemsWritten} item${lines.itemsWritten === 1 ? "" : "s"} written` : `${lines.written} record${lines.written === 1 ? "" : "s"} written`;
    printer.warn(`crawl: cannot write ${lines.destination}: ${lines.failure.message}; the crawl stopped (${written})\n`);
    if (!interrupted) status = EXIT.failed;
  }
  if (runs[0] !== undefined && !(await writeItemFiles(commandLine, runs[0], watchers, printer)) && status === EXIT.ok) status = EXIT.failed;
  if (commandLine.json !== null && streamsJson(commandLine, frontier) && runs[0] !== undefined) {
    const written = await writeStreamed(commandLine.json, resultJson(runs[0].stage, runs[0].result, interrupted), frontier, printer);
    if (!written && status === EXIT.ok) status = EXIT.failed;
  } else if (commandLine.json !== null) {
    const document = jsonDocument(commandLine.compare, runs, identical, interrupted);
    const written = await writeJson(commandLine.json, document, printer);
    if (!written && status === EXIT.ok) status = EXIT.failed;
  }
  return status;
}

/**
 * Writes `-o items.csv` and `-o items.json`, when asked for, each whole
 * (under a temporary name, then renamed): the result's items when it kept
 * them (the whole crawl, earlier runs of a `--state` crawl included), else
 * (with `--jsonl`) the items this run made. False, after a message, when one
 * cannot be written.
 */
async function writeItemFiles(commandLine: CommandLine, run: StageRun, watchers: Watchers, printer: Printer): Promise<boolean> {
  const { csv, json } = commandLine.itemFiles;
  if (csv === null && json === null) return true;
  const kept = run.result.options.keepRecords ? run.result.items : undefined;
  const items = kept ?? watchers.items ?? [];
  let written = true;
  for (const [file, text] of [[csv, itemsCsv], [json, itemsJson]] as const) {
    if (file === null) continue;
    try {
      await writeWhole(file, text(items));
    } catch (error) {
      printer.warn(`crawl: cannot write ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
      written = false;
    }
  }
  return written;
}

/**
 * Whether a crawl got no response at all: every record failed (or there is
 * none), as its records were counted. Only a root's failure can leave it so,
 * as nothing else is queued.
 *
 * With a frontier, the result's records are every process's, and this
 * process may have made few or none of them (a crawl it resumed had
 * ended): the records kept are counted then, and records neither kept
 * (`--jsonl`) nor made here are taken to hold a response.
 */
function fetchedNothing(run: StageRun): boolean {
  const { result, stats } = run;
  if (result.recorded === stats.records) return stats.failures === stats.records;
  if (result.records.length === result.recorded) return Stats.of(result.records).failures === result.recorded;
  return false;
}

/** What each error means for a root that got no response, in a few words: the `nothing fetched` line's cause. */
const ROOT_FAILURES: Readonly<Record<FetchError, string>> = {
  ConnectionRefused: "connection refused",
  ConnectionReset: "connection reset",
  HostNotFound: "host not found",
  Timeout: "timed out",
  BadResponse: "bad response",
  BodyTooLarge: "body too large",
  TlsError: "TLS handshake failed",
  NetworkError: "network error",
  RobotsDisallowed: "not fetched because robots.txt disallows it",
  RobotsUnreachable: "not fetched because robots.txt answered a 5xx or 429 on every attempt",
  ExtractError: "the onPage hook failed",
};

/**
 * Why the roots of a crawl that fetched nothing got no response, by what
 * happened to them: ` (1 root: host not found; see the report)`, or
 * ` (1 root: connection refused, 2 roots: not fetched because robots.txt
 * disallows it; see the report)` (`see the table` after `--compare`'s);
 * nothing when no record was counted.
 * Such a crawl has no records but its roots': nothing else was queued.
 *
 * @remarks A root whose origin could not be reached is recorded with the
 * network failure met reading its `robots.txt` (`HostNotFound`,
 * `ConnectionRefused`…): that is what happened, and what this names; only a
 * `robots.txt` that answered and refused is robots.txt's doing.
 */
function rootFailures(runs: readonly StageRun[], shownIn: "report" | "table"): string {
  const stats = runs[0]?.stats;
  if (stats === undefined || stats.errors.size === 0) return "";
  const causes = FETCH_ERRORS.filter(function met(error) {
    return stats.errorCount(error) > 0;
  }).map(function described(error) {
    const count = stats.errorCount(error);
    return `${count} root${count === 1 ? "" : "s"}: ${ROOT_FAILURES[error]}`;
  });
  return ` (${causes.join(", ")}; see the ${shownIn})`;
}

/** Writes the `--timeline` page; false, after a message, when the file cannot be written. */
async function writeTimeline(destination: string, panels: readonly TimelinePanel[], printer: Printer): Promise<boolean> {
  const title = `Crawl timeline: ${panels.map(stageOf).join(", ")}`;
  const { timelinePage } = await import("../observe/timeline/index.js");
  const { timelineWritten } = await import("../observe/timeline/timeline-page.js");
  try {
    await writeFile(destination, timelinePage(panels, title));
    printer.print(timelineWritten(destination, panels));
    return true;
  } catch (error) {
    printer.warn(`crawl: cannot write ${destination}: ${error instanceof Error ? error.message : String(error)}\n`);
    return false;
  }
}

function stageOf(panel: TimelinePanel): string {
  return panel.stage;
}

/** The line `crawl -vv` prints for each fetch attempt as it ends (the `-v` line per URL is the report's `urlLine`). */
function attemptLine(event: FetchEndEvent): string {
  const outcome = event.error ?? String(event.status);
  return `  attempt ${event.attempt} of ${event.url} (slot ${event.slot}): ${outcome}`;
}

/**
 * Whether the `--json` document's records are streamed from Redis at the end
 * (and not kept in memory during the crawl): with a frontier whose Redis
 * keeps the records, when `--jsonl` does not take them.
 */
function streamsJson(commandLine: CommandLine, frontier: RedisFrontier | null): frontier is RedisFrontier {
  return frontier?.keepsRecords === true && commandLine.json !== null && commandLine.jsonl === null;
}

/**
 * Writes the `--json` document with its `records` and `seen` read from Redis
 * a chunk at a time ({@link writeStreamedJson}); false, after a message, when
 * the file cannot be written. Redis failing meanwhile throws its `FrontierError`.
 */
async function writeStreamed(destination: string, document: CrawlResultJson, frontier: RedisFrontier, printer: Printer): Promise<boolean> {
  // The crawl kept no record in memory, and the document holds them all: keepRecords as the document has it.
  const streamed: CrawlResultJson = { ...document, options: { ...document.options, keepRecords: true } };
  try {
    await writeStreamedJson(destination, streamed, frontier);
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === "FrontierError") throw error;
    printer.warn(`crawl: cannot write ${destination}: ${error instanceof Error ? error.message : String(error)}\n`);
    return false;
  }
}

/** Writes the JSON to stdout (`-`) or a file; false, after a message, when the file cannot be written. */
async function writeJson(
  destination: string,
  document: CrawlResultJson | ComparisonJson,
  printer: Printer,
): Promise<boolean> {
  const text = JSON.stringify(document, null, 2) + "\n";
  if (destination === "-") {
    process.stdout.write(text);
    return true;
  }
  try {
    await writeFile(destination, text);
    return true;
  } catch (error) {
    printer.warn(`crawl: cannot write ${destination}: ${error instanceof Error ? error.message : String(error)}\n`);
    return false;
  }
}
