// @ts-check
/**
 * Counts how much of each stage's crawler.ts waits: issue 35 asks that
 * waiting lines be at least half of a crawler's substantive lines.
 *
 * Code lines are counted as the stop check counts them: comments (`//`,
 * `/* … *\/`, doc comments) and blank lines are dropped first.
 *
 * A **substantive** line is a code line that is none of these:
 * - an `import` (or `export … from`) line, or the continuation of one;
 * - a brace line: only braces, brackets, parentheses, `;` and `,`
 *   (`}`, `});`, `};`), or a block opener with no expression of its own
 *   (`try {`, `} catch {`, `} catch (error) {`, `} finally {`, `} else {`,
 *   `for (;;) {`);
 * - a header: a class, method, function or constructor signature line that
 *   opens its body (`export class Crawler {`, `private *work(): Coroutine<void> {`,
 *   `async crawl(): Promise<CrawlResult> {`, `constructor(…) {`, an arrow
 *   function kept in a field, `private readonly aborted = (): void => {`).
 *   A method written on one line with its body is substantive.
 *
 * A **waiting** line is a substantive line that waits or hands work over,
 * that is, one that contains any of:
 * - a suspension: `await`, `yield*`;
 * - a continuation registered or started: a named callback defined in place
 *   (`function fetched(`, the function a Fetcher, a timer or a loop calls
 *   back), `.fetch()` (a Fetcher's attempt starts and registers its first
 *   callback; a method of the crawler's own named `fetch(job)` is not one), `callLater(`, `.later(`, `runForever(`, `.stop()` on the
 *   loop (it ends the waiting), a worker coroutine started (`new Task(` in
 *   stage 2, which hands it to the loop; calling `this.work()` in stage 3,
 *   which runs it to its first `await`), `setExceptionHandler(`;
 * - a hand-over through a queue: `.get(`, `.put(`, `putNowait(`,
 *   `getNowait(`, `.join(`, `taskDone(`, `shutdown(`;
 * - a continuation called off: `.cancel(` (a timer, a Fetcher, or a Task whose paused
 *   coroutine gets a `CancelledError`);
 * - a hand-over of a job to or from the core: `core.next(`,
 *   `core.started(`, `core.settle(`, `core.finish(`, `core.begin(`,
 *   `core.stop(`, `core.end(` (the crawl's start, stop and end, which the
 *   stage's waiting brackets), and the abort handler's registration.
 *
 * Everything else (fields, option plumbing, publishes, bookkeeping,
 * `return result`) is substantive and not waiting. The rule is a reading
 * aid, not a parser: it matches text, so a line that only names one of
 * these words in a comment would not (comments are gone), and string
 * literals are blanked before matching (`type: "await"` is not an await).
 *
 * Usage: node scripts/waiting-lines.mjs [-v] [file …]   (default: the three crawlers;
 * `-v` prints each substantive line, marked `W` when it waits)
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";

const root = fileURLToPath(new URL("..", import.meta.url));
const verbose = process.argv.includes("-v");
const named = process.argv.slice(2).filter((arg) => arg !== "-v");
const files = named.length > 0 ? named : ["src/callbacks/crawler.ts", "src/generators/crawler.ts", "src/asyncawait/crawler.ts"];

/** The code lines of `text`: comments and blank lines dropped, as the stop check's `code_lines` does. */
function codeLines(text) {
  const lines = [];
  let inComment = false;
  for (let line of text.split("\n")) {
    if (inComment) {
      const end = line.indexOf("*/");
      if (end === -1) continue;
      line = line.slice(end + 2);
      inComment = false;
    }
    line = line.replace(/\/\*.*?\*\//g, "");
    const start = line.indexOf("/*");
    if (start !== -1) {
      line = line.slice(0, start);
      inComment = true;
    }
    line = line.replace(/\/\/.*$/, "");
    if (/\S/.test(line)) lines.push(line.trim());
  }
  return lines;
}

const BRACE = /^[\s{}()[\];,]*$/;
const OPENER = /^(\}\s*)?(try|else|finally|catch(\s*\([^)]*\))?|for\s*\(;;\))\s*\{$/;
const MODIFIERS = String.raw`((export|default|abstract|private|protected|public|static|readonly|async|override)\s+)*`;
const HEADER = new RegExp(
  String.raw`^${MODIFIERS}(class\s.*|function\s*\*?\s*[\w$]+.*|\*?\s*(?!(if|for|while|switch|catch|return)\b)[\w$]+\s*(<[^>]*>)?\(.*\)\s*(:\s*.+)?|[\w$]+\s*(:\s*[^=]+)?=\s*(async\s*)?\(.*\)\s*(:\s*.+)?=>)\s*\{$`,
);
const WAITING = [
  /\bawait\b/, /\byield\*/,
  /\bfunction\s+\w+\s*\(/, /\.fetch\(\)/, /callLater\(/, /\.later\(/, /runForever\(/, /loop\.stop\(\)/, /new Task\(/, /\.work\(\)/, /setExceptionHandler\(/,
  /\.get\(/, /\.put\(/, /putNowait\(/, /getNowait\(/, /\.join\(/, /taskDone\(/, /shutdown\(/,
  /core\.(next|started|settle|finish|begin|stop|end)\(/, /addEventListener\("abort"/, /\.cancel\(/,
];

let importing = false;
console.log("file                              substantive  waiting  share");
for (const file of files) {
  let substantive = 0;
  let waiting = 0;
  for (const line of codeLines(readFileSync(resolve(root, file), "utf8"))) {
    if (importing || /^(import|export)\b.*\bfrom\b|^import\b/.test(line)) {
      importing = !/;\s*$/.test(line);
      continue;
    }
    if (BRACE.test(line) || OPENER.test(line) || HEADER.test(line)) continue;
    substantive += 1;
    const code = line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
    const waits = WAITING.some((pattern) => pattern.test(code));
    if (waits) waiting += 1;
    if (verbose) console.log(`  ${waits ? "W" : " "} ${line}`);
  }
  const share = substantive === 0 ? 0 : Math.round((100 * waiting) / substantive);
  console.log(`${file.padEnd(34)}${String(substantive).padStart(11)}${String(waiting).padStart(9)}${String(share).padStart(6)} %`);
}
