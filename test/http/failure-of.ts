/** A test helper for the shared parsers and decoders, which throw only FetchFailure. */
import { expect } from "vitest";
import { FetchFailure } from "../../src/kernel/errors.js";
import type { FetchError } from "../../src/crawl/records.js";

/** The FetchFailure kind `run` throws; fails the test if it throws something else or nothing. */
export function failureOf(run: () => unknown): FetchError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FetchFailure);
    return (error as FetchFailure).kind;
  }
  throw new Error("expected a FetchFailure, nothing was thrown");
}
