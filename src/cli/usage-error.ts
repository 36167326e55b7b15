/**
 * The error the `crawl` command turns into one line on stderr and exit
 * status 2.
 *
 * @module
 */

/**
 * The command line cannot be run as given: an unknown option, a bad number or
 * regular expression, a missing root. Its message is a single line that names
 * the problem; the command prints it after `crawl: ` with a hint to run
 * `--help`, and never a stack trace.
 *
 * @remarks Python's argparse calls `parser.error()` for this, which also exits
 * with status 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
