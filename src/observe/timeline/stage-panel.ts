/**
 * One stage's panel of the timeline page, as inline SVG: a Gantt chart of its
 * fetch attempts by slot, the fetches in flight over time and the queue's
 * length over time, above a shared time axis.
 *
 * @module
 */
import type { StageName, TraceEvent } from "../events.js";
import { escapeXml, ms } from "./escape.js";
import { fetchAttempts, inFlightSeries, peak, queuedSeries } from "./fetch-attempts.js";
import type { FetchAttempt, StepSeries } from "./fetch-attempts.js";
import type { TimeScale } from "./time-scale.js";

/** One stage's trace, as the timeline page draws it. */
export interface TimelinePanel {
  /** The stage that made the trace. */
  stage: StageName;
  /** Every event of the crawl, in the order the trace function got them. */
  events: readonly TraceEvent[];
  /** The crawl's `maxTasks`, drawn as a limit line on the in-flight chart. */
  maxTasks?: number;
}

/**
 * What each stage's `slot` numbers: in stage 3 the worker that took the URL,
 * in stages 1 and 2 a slot the URL holds while it is fetched (see `traceCrawl`).
 * A stage of another name: "slot".
 */
const SLOT_WORD: ReadonlyMap<StageName, string> = new Map([
  ["callbacks", "slot"],
  ["generators", "slot"],
  ["asyncawait", "worker"],
]);

const GANTT_HEIGHT = 300;
const IN_FLIGHT_HEIGHT = 70;
const QUEUED_HEIGHT = 50;
const GAP = 22;

/**
 * Draws `panel` as an `<svg>` whose width the scale sets. Each attempt is a
 * `<g class="bar">` with its phases as rects (connecting, waiting, reading), a
 * `<title>` the browser shows on hover, and `data-*` attributes the page's
 * script shows on click.
 */
export function stagePanelSvg(panel: TimelinePanel, scale: TimeScale): string {
  const attempts = fetchAttempts(panel.events);
  const slots = [...new Set(attempts.map(slotOf))].sort(numerically);
  const row = new Map(slots.map(function rowOf(slot, index) {
    return [slot, index];
  }));
  const rowHeight = Math.max(3, Math.min(14, Math.floor(GANTT_HEIGHT / Math.max(1, slots.length))));
  const ganttHeight = rowHeight * Math.max(1, slots.length);
  const inFlightTop = ganttHeight + GAP;
  const queuedTop = inFlightTop + IN_FLIGHT_HEIGHT + GAP;
  const axisTop = queuedTop + QUEUED_HEIGHT;
  const parts: string[] = [grid(scale, axisTop)];

  const word = SLOT_WORD.get(panel.stage) ?? "slot";
  parts.push(label(`${word}s`, 4, 12), label(`(${slots.length})`, 4, 26));
  for (const attempt of attempts) {
    const y = (row.get(attempt.slot) ?? 0) * rowHeight;
    parts.push(bar(panel.stage, word, attempt, scale, y, Math.max(2, rowHeight - 1)));
  }

  const inFlight = inFlightSeries(attempts);
  const highest = peak(inFlight);
  const limit = panel.maxTasks;
  const drawLimit = limit !== undefined && limit <= highest * 1.25;
  const inFlightMax = drawLimit ? Math.max(highest, limit) : Math.max(1, highest);
  parts.push(label("in flight", 4, inFlightTop + 12), label(`peak ${highest}`, 4, inFlightTop + 26));
  parts.push(stepChart(inFlight, scale, inFlightTop, IN_FLIGHT_HEIGHT, inFlightMax, "in-flight"));
  if (drawLimit) {
    const y = inFlightTop + IN_FLIGHT_HEIGHT * (1 - limit / inFlightMax);
    parts.push(
      `<line class="limit" x1="${scale.left}" x2="${scale.right}" y1="${y}" y2="${y}"/>`,
      `<text class="limit-label" x="${scale.right - 4}" y="${y - 3}" text-anchor="end">maxTasks ${limit}</text>`,
    );
  } else if (limit !== undefined) {
    // A limit far above the peak would squash the chart: name it instead of drawing it.
    const y = inFlightTop + 12;
    parts.push(`<text class="limit-label" x="${scale.right - 4}" y="${y}" text-anchor="end">maxTasks ${limit}: above the chart</text>`);
  }

  const queued = queuedSeries(panel.events);
  parts.push(label("queued", 4, queuedTop + 12), label(`peak ${peak(queued)}`, 4, queuedTop + 26));
  parts.push(stepChart(queued, scale, queuedTop, QUEUED_HEIGHT, Math.max(1, peak(queued)), "queued"));

  const height = axisTop + 20;
  return (
    `<svg class="stage-panel" data-stage="${panel.stage}" width="${scale.right + 10}" height="${height}" ` +
    `viewBox="0 0 ${scale.right + 10} ${height}" role="img" aria-label="${panel.stage} timeline">\n` +
    parts.join("\n") +
    "\n</svg>"
  );
}

/** One attempt: a group of up to three phase rects with a hover title and data for the click box. */
function bar(stage: StageName, word: string, attempt: FetchAttempt, scale: TimeScale, y: number, height: number): string {
  const { start, connect, firstByte, end } = attempt;
  const waitFrom = connect ?? end;
  const readFrom = firstByte ?? end;
  const phases: Array<[string, number, number]> = [
    ["connecting", start, waitFrom],
    ["waiting", waitFrom, readFrom],
    ["reading", readFrom, end],
  ];
  const rects = phases
    .filter(function notEmpty([, from, to]) {
      return to > from;
    })
    .map(function rect([phase, from, to]) {
      const x = scale.x(from);
      const width = Math.max(0.8, scale.x(to) - x);
      return `<rect class="${phase}" x="${x.toFixed(2)}" y="${y}" width="${width.toFixed(2)}" height="${height}"/>`;
    });
  if (rects.length === 0) {
    rects.push(`<rect class="connecting" x="${scale.x(start).toFixed(2)}" y="${y}" width="0.8" height="${height}"/>`);
  }
  const outcome = attempt.error ?? (attempt.status === null ? "unfinished" : String(attempt.status));
  const timings = [
    `start ${ms(start)}`,
    `connect ${connect === null ? "—" : `+${ms(connect - start)}`}`,
    `first byte ${firstByte === null ? "—" : `+${ms(firstByte - (connect ?? start))}`}`,
    `read ${firstByte === null ? "—" : `${ms(end - firstByte)}, ${attempt.bytes} bytes`}`,
    `total ${ms(end - start)}`,
  ].join(" · ");
  const title = `${attempt.url}\n${outcome} · ${word} ${attempt.slot} · try ${attempt.attempt}\n${timings}`;
  const failed = attempt.error !== null ? " failed" : "";
  return (
    `<g class="bar${failed}" data-stage="${stage}" data-url="${escapeXml(attempt.url)}" ` +
    `data-outcome="${escapeXml(outcome)}" data-slot="${word} ${attempt.slot}" data-attempt="${attempt.attempt}" ` +
    `data-timings="${escapeXml(timings)}"><title>${escapeXml(title)}</title>${rects.join("")}</g>`
  );
}

/** A filled step chart of `series` in the band from `top`, `height` high, scaled to `max`. */
function stepChart(series: StepSeries, scale: TimeScale, top: number, height: number, max: number, kind: string): string {
  const bottom = top + height;
  const y = function yOf(value: number): string {
    return (bottom - (value / max) * height).toFixed(2);
  };
  let path = `M${scale.x(0).toFixed(2)},${bottom}`;
  let previous = 0;
  for (const [t, value] of series) {
    const x = scale.x(t).toFixed(2);
    path += ` L${x},${y(previous)} L${x},${y(value)}`;
    previous = value;
  }
  path += ` L${scale.right},${y(previous)} L${scale.right},${bottom} Z`;
  return (
    `<rect class="band" x="${scale.left}" y="${top}" width="${scale.right - scale.left}" height="${height}"/>` +
    `<path class="${kind}" d="${path}"/>` +
    `<text class="scale" x="${scale.left - 4}" y="${top + 9}" text-anchor="end">${max}</text>`
  );
}

/** Vertical lines at the ticks, and their labels on the axis at `axisTop`. */
function grid(scale: TimeScale, axisTop: number): string {
  return scale
    .ticks()
    .map(function tick(t, index, ticks) {
      const x = scale.x(t).toFixed(2);
      // The last label ends at its tick, so it is not cut off at the right edge.
      const anchor = index === ticks.length - 1 && index > 0 ? "end" : "middle";
      return (
        `<line class="grid" x1="${x}" x2="${x}" y1="0" y2="${axisTop}"/>` +
        `<text class="tick" x="${x}" y="${axisTop + 14}" text-anchor="${anchor}">${t} ms</text>`
      );
    })
    .join("\n");
}

function label(text: string, x: number, y: number): string {
  return `<text class="label" x="${x}" y="${y}">${escapeXml(text)}</text>`;
}

function slotOf(attempt: FetchAttempt): number {
  return attempt.slot;
}

function numerically(a: number, b: number): number {
  return a - b;
}
