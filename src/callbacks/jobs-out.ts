/**
 * The stage 1 Crawler's bookkeeping: the jobs it has out, what runs for
 * each, and how their requests are made.
 *
 * @module
 */
import type { ResolvedCrawlOptions } from "../crawl/options.js";
import { SlotMap } from "../crawl/slots.js";
import { CrawlRequests } from "../http/crawl-requests.js";

/** What runs for a job: a Fetcher, or a wait's timer; either can be called off. */
export type Running = { cancel(): void };

/**
 * The jobs a callback crawl has out, each with what runs for it (its
 * Fetcher, or a wait's timer), on top of the request options and kept
 * connections its Fetchers share: a {@link CrawlRequests}, whose
 * `optionsFor(job)` gives a job's request options (a page's, or, for a
 * `robots.txt` or a sitemap, read whole; with the kept connections).
 * `close()` calls off whatever still runs, closes the kept connections, and
 * hands back the jobs that were out, for the crawl core to take back: the
 * plain bookkeeping a callback crawler keeps by hand, where stages 2 and 3
 * have a queue and workers.
 *
 * @remarks The jobs sit in a {@link SlotMap}, not a `Map`: src/crawl/slots.ts
 * says why (memory).
 */
export class JobsOut<J extends { readonly kind: string }> extends CrawlRequests<ResolvedCrawlOptions> {
  private readonly out = new SlotMap<J, Running>();

  /** Notes what runs for `job` now (a new Fetcher replaces the last one). */
  set(job: J, running: Running): void {
    this.out.set(job, running);
  }

  /** `job` is over: nothing runs for it any more. */
  delete(job: J): void {
    this.out.delete(job);
  }

  /** Calls off what still runs, closes the kept connections, and returns the jobs that were out. */
  override close(): J[] {
    const jobs: J[] = [];
    for (const [job, running] of this.out.entries()) {
      running.cancel();
      this.out.delete(job);
      jobs.push(job);
    }
    super.close();
    return jobs;
  }
}
