/**
 * Ctrl-C for the `crawl` command: the first stops the crawl gently, the
 * second ends the process.
 *
 * @module
 */
import { CancelledError } from "../kernel/errors.js";

/**
 * Turns SIGINT into an aborted {@link AbortSignal}.
 *
 * The first Ctrl-C aborts {@link Interrupt.signal}, which every stage obeys:
 * no new URLs are taken, the fetches in flight are cancelled, and `crawl()`
 * resolves with the records so far, so the command can still print a partial
 * report. A second Ctrl-C calls `onSecond`, which exits at once.
 *
 * @remarks crawl.py catches `KeyboardInterrupt` around `loop.run_until_complete`
 * and prints the report anyway; Node delivers SIGINT as an event instead, and
 * once a listener is installed the default (exit at once) no longer happens.
 */
export class Interrupt {
  private readonly controller = new AbortController();
  private count = 0;

  /**
   * @param onFirst called on the first Ctrl-C, after the signal aborted.
   * @param onSecond called on the second Ctrl-C; expected to exit.
   */
  constructor(
    private readonly onFirst: () => void,
    private readonly onSecond: () => void,
  ) {}

  /** Aborted by the first Ctrl-C, with a {@link CancelledError} as its reason. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether Ctrl-C was pressed. */
  get interrupted(): boolean {
    return this.count > 0;
  }

  /** Starts listening for SIGINT. */
  listen(): void {
    process.on("SIGINT", this.onSigint);
  }

  /** Stops listening: Ctrl-C ends the process the usual way again. */
  dispose(): void {
    process.off("SIGINT", this.onSigint);
  }

  /** An arrow field, so `process.off` can find the same function later. */
  private readonly onSigint = (): void => {
    this.count += 1;
    if (this.count > 1) {
      this.onSecond();
      return;
    }
    this.controller.abort(new CancelledError("interrupted by Ctrl-C"));
    this.onFirst();
  };
}
