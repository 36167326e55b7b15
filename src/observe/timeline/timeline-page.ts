/**
 * The `crawl --timeline FILE.html` page: one self-contained HTML document,
 * inline SVG and a few lines of inline script, no network.
 *
 * @module
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pkg from "../../../package.json" with { type: "json" };
import { escapeXml, ms } from "./escape.js";
import { fetchAttempts, inFlightSeries, peak } from "./fetch-attempts.js";
import { stagePanelSvg } from "./stage-panel.js";
import type { TimelinePanel } from "./stage-panel.js";
import { TimeScale } from "./time-scale.js";
import { whatToNotice } from "./what-to-notice.js";

/** The width of each panel's SVG, in CSS pixels. */
const WIDTH = 1100;
/** Where the time axis starts: room for the row labels. */
const AXIS_LEFT = 92;

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 18px 0 4px; }
p.note { margin: 0 0 8px; color: #555; }
p.notice { margin: 0 0 6px; max-width: 1060px; } p.notice b { color: #8a5a00; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: baseline; }
.connecting { fill: #4e79a7; background: #4e79a7; } .waiting { fill: #f2b447; background: #f2b447; }
.reading { fill: #59a14f; background: #59a14f; }
.bar rect { stroke: #fff; stroke-width: 0.4; }
.bar { cursor: pointer; } .bar:hover rect { fill-opacity: 0.6; }
.bar.failed rect { stroke: #d62728; stroke-width: 1.5; }
.bar.selected rect { stroke: #000; stroke-width: 1.5; }
.in-flight { fill: #9ecae1; stroke: #3182bd; background: #9ecae1; }
.queued { fill: #fdd0a2; stroke: #e6550d; background: #fdd0a2; }
.band { fill: #f7f7f7; } .grid { stroke: #e3e3e3; }
.limit { stroke: #d62728; stroke-dasharray: 5 3; } .limit-label { fill: #d62728; font-size: 11px; }
.label { font-size: 12px; fill: #333; } .tick, .scale { font-size: 11px; fill: #666; }
#detail { position: sticky; top: 0; background: #fffbe6; border: 1px solid #e0c97f; padding: 6px 10px;
  min-height: 2.8em; white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 13px; z-index: 1; }
`;

/**
 * Shows a clicked bar's URL, outcome and timings in the detail box. Kept as
 * plain JavaScript text: the page must run in a browser with nothing loaded.
 */
const SCRIPT = `
function showDetail(event) {
  var bar = event.target.closest ? event.target.closest(".bar") : null;
  if (bar === null) return;
  var previous = document.querySelector(".bar.selected");
  if (previous !== null) previous.classList.remove("selected");
  bar.classList.add("selected");
  var data = bar.dataset;
  document.getElementById("detail").textContent =
    data.stage + "  " + data.url + "\\n" + data.outcome + " · " + data.slot + " · try " + data.attempt + "\\n" + data.timings;
}
document.addEventListener("click", showDetail);
`;

/**
 * Renders the timeline of one crawl, or with several panels (`--compare`)
 * one panel per stage on the same time axis, so equal widths mean equal
 * times across the stages.
 *
 * Each panel has a Gantt chart of every fetch attempt by slot (stages 1
 * and 2) or worker (stage 3), coloured by phase: connecting (fetch start to
 * connection ready), waiting (to the first byte) and reading (to the end of
 * the attempt, parsing included); the fetches in flight over time, with the
 * `maxTasks` limit; and the queue's length over time. Under each panel's
 * heading, a caption says what to notice in it ({@link whatToNotice}): how
 * the stage waits, and what its trace shows.
 *
 * @remarks Hand-written SVG rather than a charting library: a few rects and
 * paths per panel, and the page stays one file that opens with no network.
 * @example
 * ```ts
 * const events: TraceEvent[] = [];
 * await crawl(root, { trace: (event) => events.push(event) });
 * await writeFile("timeline.html", timelinePage([{ stage: "asyncawait", events }]));
 * ```
 */
export function timelinePage(panels: readonly TimelinePanel[], title = "Crawl timeline"): string {
  const endMs = Math.max(0, ...panels.map(lastTime));
  const scale = new TimeScale(endMs, AXIS_LEFT, WIDTH);
  const sections = panels.map(function section(panel) {
    const notice = `<p class="notice"><b>What to notice:</b> ${escapeXml(whatToNotice(panel).join(" "))}</p>`;
    return `<section class="panel" data-stage="${panel.stage}">\n<h2>${escapeXml(summary(panel))}</h2>\n${notice}\n${stagePanelSvg(panel, scale)}\n</section>`;
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeXml(title)}</h1>
<p class="note">Made by coroutine-crawler ${pkg.version} from the crawl's trace events. One bar per fetch attempt; hover for its
title, click for its details. Time runs left to right, the same axis in every panel.</p>
<p class="legend"><span><i class="connecting"></i>connecting</span><span><i class="waiting"></i>waiting for the first byte</span>
<span><i class="reading"></i>reading and parsing</span><span><i style="outline: 1.5px solid #d62728"></i>failed attempt</span>
<span><i class="in-flight"></i>fetches in flight</span><span><i class="queued"></i>URLs queued</span></p>
<div id="detail">Click a bar to see its URL, outcome and timings.</div>
${sections.join("\n")}
<script>${SCRIPT}</script>
</body>
</html>
`;
}

/** A panel's heading: the stage, its attempts, the peak in flight and how long it took. */
function summary(panel: TimelinePanel): string {
  const attempts = fetchAttempts(panel.events);
  const highest = peak(inFlightSeries(attempts));
  const limit = panel.maxTasks === undefined ? "" : ` (maxTasks ${panel.maxTasks})`;
  return `${panel.stage}: ${attempts.length} fetch attempts, at most ${highest} in flight${limit}, ${ms(lastTime(panel))}`;
}

function lastTime(panel: TimelinePanel): number {
  const events = panel.events;
  return events.length === 0 ? 0 : events[events.length - 1].t;
}

/**
 * The line `crawl --timeline FILE` prints once it has written the page: the
 * file as given, what it holds, and the `file:` URL to open in a browser.
 *
 * @example
 * ```text
 * Timeline of callbacks, generators, asyncawait written to timeline.html: open file:///home/me/crawler/timeline.html in a browser.
 * ```
 */
export function timelineWritten(destination: string, panels: readonly TimelinePanel[]): string {
  const stages = panels.map(stageOf).join(", ");
  return `Timeline of ${stages === "" ? "no crawl" : stages} written to ${destination}: open ${pathToFileURL(resolve(destination)).href} in a browser.\n`;
}

function stageOf(panel: TimelinePanel): string {
  return panel.stage;
}
