/**
 * Draws a crawl's trace: {@link timelinePage} turns the events that
 * `CrawlOptions.trace` reported into a self-contained HTML page, the one
 * `crawl --timeline FILE.html` writes. Read `fetch-attempts.ts` first: it
 * shows how the fetch events of any stage become bars.
 *
 * @module
 */
export { fetchAttempts, inFlightSeries, peak, queuedSeries } from "./fetch-attempts.js";
export type { FetchAttempt, StepSeries } from "./fetch-attempts.js";
export { stagePanelSvg } from "./stage-panel.js";
export type { TimelinePanel } from "./stage-panel.js";
export { TimeScale } from "./time-scale.js";
export { timelinePage } from "./timeline-page.js";
export { whatToNotice } from "./what-to-notice.js";
export { escapeXml } from "./escape.js";
