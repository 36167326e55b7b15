/**
 * The stepper page in the browser: reads the recordings embedded in the page
 * (or loaded from a file), and draws the six views of the chosen step. Step,
 * Back, Run-to, the slider and the deep link only choose a step number; the
 * views are then drawn afresh from that step's snapshot and the one before,
 * so any way of reaching a step draws the same page.
 *
 * Keys: → or `.` steps, ← or `,` goes back, Home and End go to the first and
 * last step, `r` runs to the chosen condition.
 *
 * @module
 */
import type { Recording } from "../recording.js";
import { type RunTo, RecordingFormatError, fetchedUrls, formatHash, parseHash, readRecordings, runTo } from "./model.js";
import { VIEW_NAMES, VIEW_TITLES, type ViewName, escapeHtml, recordingNotice, renderViews, stepHeading } from "./views.js";

/** The page's state: the recordings it can show, the one shown, and its step. */
class Stepper {
  private recordings: { recording: Recording; name: string }[] = [];
  private current = 0;
  private index = 0;
  private readonly bodies = new Map<ViewName, HTMLElement>();

  constructor(private readonly root: Document) {}

  /** Lays out the views and wires the controls; shows the step the hash names, or the first. */
  start(embedded: Recording[]): void {
    for (const recording of embedded) this.recordings.push({ recording, name: recording.title ?? recording.stage });
    const views = this.element("views");
    for (const view of VIEW_NAMES) {
      const section = this.root.createElement("section");
      section.className = "view";
      section.id = `view-${view}`;
      section.dataset["view"] = view;
      section.innerHTML = `<h2>${escapeHtml(VIEW_TITLES[view])}</h2><div class="body"></div>`;
      const body = section.querySelector<HTMLElement>(".body");
      if (body === null) throw new Error("a view lost its body");
      this.bodies.set(view, body);
      views.append(section);
    }
    this.element("step").addEventListener("click", this.stepForward.bind(this));
    this.element("back").addEventListener("click", this.stepBack.bind(this));
    this.element("run").addEventListener("click", this.runToCondition.bind(this));
    this.element("slider").addEventListener("input", this.slid.bind(this));
    this.element("stage").addEventListener("change", this.stageChosen.bind(this));
    this.element("condition").addEventListener("change", this.conditionChosen.bind(this));
    this.element("file").addEventListener("change", this.fileChosen.bind(this));
    this.root.addEventListener("keydown", this.keyPressed.bind(this));
    window.addEventListener("hashchange", this.hashChanged.bind(this));
    this.fillStages();
    if (!this.followHash()) this.show(0, 0);
  }

  /** The element with `id`, which the page template must have. */
  private element<T extends HTMLElement = HTMLElement>(id: string): T {
    const found = this.root.getElementById(id);
    if (found === null) throw new Error(`the page has no #${id}`);
    return found as T;
  }

  /** The recording shown. */
  private get recording(): Recording {
    const entry = this.recordings[this.current];
    if (entry === undefined) throw new Error("no recording to show");
    return entry.recording;
  }

  /** Shows step `index` of recording `current`: every view drawn afresh, the controls set, the hash updated. */
  show(current: number, index: number): void {
    const recordingChanged = current !== this.current;
    this.current = current;
    const recording = this.recording;
    this.index = Math.max(0, Math.min(index, recording.steps.length - 1));
    const html = renderViews(recording, this.index);
    for (const view of VIEW_NAMES) {
      const body = this.bodies.get(view);
      if (body !== undefined) body.innerHTML = html[view];
    }
    this.element("heading").innerHTML = stepHeading(recording, this.index);
    this.element("counter").textContent = `step ${this.index} of ${recording.steps.length - 1}`;
    const slider = this.element<HTMLInputElement>("slider");
    slider.max = String(recording.steps.length - 1);
    slider.value = String(this.index);
    this.element<HTMLButtonElement>("back").disabled = this.index === 0;
    this.element<HTMLButtonElement>("step").disabled = this.index === recording.steps.length - 1;
    this.element<HTMLSelectElement>("stage").value = String(this.current);
    if (recordingChanged || this.element<HTMLSelectElement>("url").options.length === 0) this.fillUrls();
    const notice = recordingNotice(recording);
    const noticeElement = this.element("notice");
    noticeElement.innerHTML = notice;
    noticeElement.hidden = notice === "";
    const hash = formatHash(recording.stage, this.index);
    if (window.location.hash !== hash) history.replaceState(null, "", hash);
  }

  /** The stage picker's options: one per recording. */
  private fillStages(): void {
    this.element("stage").innerHTML = this.recordings
      .map(function option(entry, position) { return `<option value="${position}">${escapeHtml(entry.name)}</option>`; })
      .join("");
  }

  /** The URL picker's options: every URL the shown recording fetched. */
  private fillUrls(): void {
    this.element("url").innerHTML = fetchedUrls(this.recording)
      .map(function option(url) { return `<option value="${escapeHtml(url)}">${escapeHtml(url)}</option>`; })
      .join("");
  }

  private stepForward(): void {
    this.status("");
    this.show(this.current, this.index + 1);
  }

  private stepBack(): void {
    this.status("");
    this.show(this.current, this.index - 1);
  }

  private slid(): void {
    this.status("");
    this.show(this.current, Number(this.element<HTMLInputElement>("slider").value));
  }

  private stageChosen(): void {
    this.status("");
    this.show(Number(this.element<HTMLSelectElement>("stage").value), 0);
  }

  /** The URL picker is shown only for "a URL fetched". */
  private conditionChosen(): void {
    this.element("url").hidden = this.element<HTMLSelectElement>("condition").value !== "fetched";
  }

  /** Runs to the first later step that meets the chosen condition, or says there is none. */
  private runToCondition(): void {
    const kind = this.element<HTMLSelectElement>("condition").value;
    const condition: RunTo =
      kind === "fetched" ? { kind: "fetched", url: this.element<HTMLSelectElement>("url").value } : kind === "future" ? { kind: "future" } : kind === "task-done" ? { kind: "task-done" } : { kind: "dispatch" };
    const found = runTo(this.recording, this.index, condition);
    if (found === null) {
      this.status(`no later step where ${this.element<HTMLSelectElement>("condition").selectedOptions[0]?.textContent ?? kind}`);
      return;
    }
    this.status("");
    this.show(this.current, found);
  }

  private keyPressed(event: KeyboardEvent): void {
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const last = this.recording.steps.length - 1;
    if (event.key === "ArrowRight" || event.key === ".") this.stepForward();
    else if (event.key === "ArrowLeft" || event.key === ",") this.stepBack();
    else if (event.key === "Home") this.show(this.current, 0);
    else if (event.key === "End") this.show(this.current, last);
    else if (event.key === "r") this.runToCondition();
    else return;
    event.preventDefault();
  }

  /** Shows what the hash names (`#step=N`, `#stage=S&step=N`); false when it names nothing. */
  private followHash(): boolean {
    const link = parseHash(window.location.hash);
    if (link.step === null && link.stage === null) return false;
    const named = link.stage === null ? -1 : this.recordings.findIndex(function byStage(entry) { return entry.recording.stage === link.stage; });
    this.show(named === -1 ? this.current : named, link.step ?? 0);
    return true;
  }

  private hashChanged(): void {
    this.followHash();
  }

  /** Loads the chosen file's recordings (one, or a list) and shows the first of them. */
  private fileChosen(): void {
    const input = this.element<HTMLInputElement>("file");
    const file = input.files?.[0];
    if (file === undefined) return;
    file.text().then(this.loaded.bind(this, file.name), this.loadFailed.bind(this, file.name));
  }

  private loaded(fileName: string, text: string): void {
    try {
      const added = readRecordings(JSON.parse(text));
      const first = this.recordings.length;
      for (const recording of added) this.recordings.push({ recording, name: `${recording.title ?? recording.stage} (${fileName})` });
      this.fillStages();
      this.status(`loaded ${added.length} recording${added.length === 1 ? "" : "s"} from ${fileName}`);
      this.show(first, 0);
    } catch (error) {
      this.loadFailed(fileName, error);
    }
  }

  private loadFailed(fileName: string, error: unknown): void {
    const reason = error instanceof RecordingFormatError || error instanceof SyntaxError ? error.message : String(error);
    this.status(`${fileName} is not a recording: ${reason}`);
  }

  /** A line under the controls: what Run-to or a load did. */
  private status(text: string): void {
    this.element("status").textContent = text;
  }
}

/** Reads the recordings the build embedded in `<script id="recordings">`. */
function embeddedRecordings(): Recording[] {
  const data = document.getElementById("recordings")?.textContent ?? "[]";
  return readRecordings(JSON.parse(data));
}

new Stepper(document).start(embeddedRecordings());
