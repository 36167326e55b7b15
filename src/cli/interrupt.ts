/**
 * Ctrl-C, SIGTERM and SIGHUP for the `crawl` command: the first stops the
 * crawl gently, the second ends the process.
 *
 * @module
 */
import { constants } from "node:os";
import { CancelledError } from "../kernel/errors.js";

/**
 * The signals that stop a crawl gently: Ctrl-C (SIGINT); SIGTERM, which
 * `kill`, `timeout`, `docker stop` and systemd send; SIGHUP, which a closed
 * terminal (or `nohup`'s absence) sends.
 */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** One of {@link STOP_SIGNALS}. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The exit status a shell reports for a process a signal ended: 128 + its number (130, 143, 129). */
export function signalExitStatus(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/** How long SIGTERM lets the fetches in flight finish before it cuts them short, in ms. */
export const FINISH_IN_FLIGHT_MS = 5_000;

/**
 * Turns SIGINT, SIGTERM and SIGHUP into an aborted {@link AbortSignal}.
 *
 * The first of them aborts {@link Interrupt.signal}, which every stage obeys:
 * no new URLs are taken, the fetches in flight are cancelled, and `crawl()`
 * resolves with the records so far, so the command can still print a partial
 * report and write its outputs. SIGTERM (a service being stopped, not a
 * person at the keyboard) aborts {@link Interrupt.finishing} first, the
 * crawl's `finishSignal`: no new URLs, but the fetches in flight finish and
 * make their records, for up to {@link FINISH_IN_FLIGHT_MS}; then
 * {@link Interrupt.signal} cuts the rest short. A second signal (of any of
 * the three) calls `onSecond`, which exits at once.
 *
 * @remarks crawl.py catches `KeyboardInterrupt` around `loop.run_until_complete`
 * and prints the report anyway; Node delivers signals as events instead, and
 * once a listener is installed the default (exit at once) no longer happens.
 * Scrapy and crawlee treat SIGTERM as the same graceful stop.
 */
export class Interrupt {
  private readonly controller = new AbortController();
  private readonly finishController = new AbortController();
  private first: StopSignal | null = null;
  /** SIGTERM's timer: the fetches in flight are cut short when it fires. */
  private finishTimer: NodeJS.Timeout | null = null;

  /**
   * @param onFirst called on the first signal, after {@link Interrupt.signal} aborted.
   * @param onSecond called on the second signal; expected to exit.
   */
  constructor(
    private readonly onFirst: (signal: StopSignal) => void,
    private readonly onSecond: (signal: StopSignal) => void,
  ) {}

  /** Aborted by the first signal, with a {@link CancelledError} as its reason. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborted by a first SIGTERM (the crawl's `finishSignal`), and with {@link Interrupt.signal}. */
  get finishing(): AbortSignal {
    return this.finishController.signal;
  }

  /** Whether a stop signal came. */
  get interrupted(): boolean {
    return this.first !== null;
  }

  /** The first stop signal that came, or null. */
  get received(): StopSignal | null {
    return this.first;
  }

  /** Starts listening for the {@link STOP_SIGNALS}. */
  listen(): void {
    for (const name of STOP_SIGNALS) process.on(name, this.onSignal);
  }

  /** Stops listening: the signals end the process the usual way again. */
  dispose(): void {
    for (const name of STOP_SIGNALS) process.off(name, this.onSignal);
    if (this.finishTimer !== null) clearTimeout(this.finishTimer);
    this.finishTimer = null;
  }

  /** An arrow field, so `process.off` can find the same function later. */
  private readonly onSignal = (name: NodeJS.Signals): void => {
    const signal = STOP_SIGNALS.find((stop) => stop === name) ?? "SIGINT";
    if (this.first !== null) {
      this.onSecond(signal);
      return;
    }
    this.first = signal;
    const by = signal === "SIGINT" ? "Ctrl-C" : signal;
    const reason = new CancelledError(`interrupted by ${by}`);
    this.finishController.abort(reason);
    if (signal === "SIGTERM") {
      const controller = this.controller;
      this.finishTimer = setTimeout(function cutShort() { controller.abort(reason); }, FINISH_IN_FLIGHT_MS);
    } else {
      this.controller.abort(reason);
    }
    this.onFirst(signal);
  };
}
