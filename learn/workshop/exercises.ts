/**
 * The workshop's exercises, in the chapter's order: each one hands back a
 * part of the library with its bodies taken out, for the learner to write
 * again, and names the project's own tests that check it.
 *
 * @module
 */

/** Which crawler an exercise belongs to; at the last exercise of a stage the contract suite crawls with the learner's parts. */
export type Stage = "callbacks" | "generators" | "asyncawait";

/** One exercise. */
export interface Exercise {
  /** Its number: `npm run learn -- 4`. */
  readonly number: number;
  /** What the learner builds, in a few words. */
  readonly title: string;
  /** The stage whose crawler is built from it, or null for a drill no crawler is built from (the busy loop, predict the order, the driver). */
  readonly stage: Stage | null;
  /** The learner's file, under the learner's folder (`learn/` by default). */
  readonly file: string;
  /** What the learner writes, in one line: the list (`npm run learn`) and learn/README.md say it. */
  readonly task: string;
  /** The file's name before the workshop was renumbered (eight exercises, then ten), if it had another: a file of that name is moved to `file`. */
  readonly formerFile?: string;
  /** The library module the learner's file stands in for, from the repository's root. */
  readonly source: string;
  /** The functions and methods (`Class.member`) whose bodies the learner writes. */
  readonly write: readonly string[];
  /** The project's test files that check it, from the repository's root. */
  readonly checks: readonly string[];
  /** True for a stage's last exercise: once its checks pass, the contract suite crawls with the stage's parts. */
  readonly endsStage: boolean;
  /** Hints, the gentlest first: `--hint` gives the next one. */
  readonly hints: readonly string[];
}

/** The contract suite's files, run against one stage (`-t "'callbacks' crawler"`) at a stage's end. */
export const CONTRACT_CHECKS: readonly string[] = [
  "test/contract/crawl-contract.test.ts",
  "test/contract/controls.test.ts",
  "test/contract/politeness.test.ts",
];

/** The exercises, numbered 1 to 10 in the order the primer (docs/start-here.md) sends the learner to them. */
export const exercises: readonly Exercise[] = [
  {
    number: 1,
    title: "The busy loop",
    stage: null,
    file: "01-busy-loop.ts",
    task: "sendByPolling and receiveByPolling: poll a non-blocking socket until it is ready, giving Node's loop a turn between tries",
    source: "examples/02-nonblocking-busy-loop.ts",
    write: ["sendByPolling", "receiveByPolling"],
    checks: ["test/examples/busy-loop.test.ts"],
    endsStage: false,
    hints: [
      "A non-blocking call never waits: `send` throws an error whose `code` is \"EAGAIN\" while the socket is still connecting, and `recv` throws it while nothing has arrived. `wouldBlock(error)` tells you which errors those are; any other error must be thrown on.",
      "Loop for ever: try the call; if it worked, you are done; if it would block, count one poll and give Node's loop a turn with `await nextTurn()` before trying again. Without that await, Node never learns that the connection is up (run example 02: its first part shows it).",
      "receiveByPolling loops `while (!parser.done)`: a chunk of bytes goes to `parser.feed(chunk)`; an empty chunk means the server closed the connection, and goes to `parser.end()`.",
      "sendByPolling: `let polls = 0; for (;;) { try { send(socket, request); return polls; } catch (error) { if (!wouldBlock(error)) throw error; polls += 1; await nextTurn(); } }`",
    ],
  },
  {
    number: 2,
    title: "The selector-driven loop",
    stage: "callbacks",
    file: "02-selector-loop.ts",
    task: "EventLoop.runOnce and dispatch: one turn of select, call each ready socket's callback, run the due timers, then plan the next turn or sleep",
    source: "src/callbacks/event-loop.ts",
    write: ["EventLoop.runOnce", "EventLoop.dispatch"],
    checks: ["test/callbacks/event-loop.test.ts"],
    endsStage: false,
    hints: [
      "`dispatch` is the chapter's `callback = event_key.data; callback(event_key, event_mask)`: call `key.data(key, mask)`. If it throws, hand the error and the key to `this.exceptionHandler`, or throw it on when there is none. `runTimer` next to it does the same for a timer: read it.",
      "`runOnce` is one turn of the chapter's `while True:` loop. In order: clear `this.scheduled` and `this.sleepTimer` (this call is the one they planned), set `this.iterating`, read the clock once (`performance.now()`), `this.selector.select(this.dispatch)` (it returns how many sockets were ready), then run every timer that is due at that moment: `this.timers.popDue(now)` until it returns undefined. Put `this.iterating = false` in a `finally`.",
      "Then plan the next turn. If `stop()` was called: clear a scheduled immediate, set `running` and `stopping` back to false and call `this.onStopped?.()` (it may be unset). Else if some socket was ready: `this.schedule()` at once (the selector is level-triggered: it may still be ready). Else, if a timer is waiting (`this.timers.peek()`): `schedule()` if it is due already, or else sleep with `setTimeout(this.runOnce, wait)`, no longer than `2 ** 31 - 1` ms (Node's longest `setTimeout`).",
      "With nothing ready and no timer, do nothing at all: the selector's wakeup (set in the constructor) schedules the next turn when a socket event arrives. That is how the loop sleeps without spinning. `npm run learn -- 2 --solution` shows the library's code.",
    ],
  },
  {
    number: 3,
    title: "A Fetcher's callbacks",
    stage: "callbacks",
    file: "03-fetcher.ts",
    task: "Fetcher.fetch, connected and readResponse: the chapter's fetch as three callbacks (connect, send the request, read and parse the response)",
    source: "src/callbacks/fetcher.ts",
    write: ["Fetcher.fetch", "Fetcher.connected", "Fetcher.readResponse"],
    checks: ["test/callbacks/fetcher.test.ts"],
    endsStage: true,
    hints: [
      "Three callbacks carry one fetch: `fetch` starts it, `connected` runs when the socket is writable, `readResponse` each time it is readable. Everything they share lives on `this`: there is no other place for it between two callbacks. An exception must not leave a callback (the loop, not `fetch`, would get it): each one ends in `this.failed(error)`.",
      "`fetch`: count the try (`this.tries`), a new parser (`this.parser = new ResponseParser(parserOptions(this.options))`), the attempt's timer (`this.timer = this.loop.callLater(this.options.timeoutMs, this.timedOut)`), then in a `try`: `this.socket = this.open(new URL(this.url))` and register it for writing: `this.loop.selector.register(this.socket, EVENT_WRITE, this.connected)`.",
      "`connected`: unregister the socket (`key.socket`), `this.sendRequest(key.socket)` (it throws if the connection failed), register it again for reading with `this.readResponse`; any error goes to `this.failed`. Before sending: a kept connection the server closed since `fetch()` took it (`this.options.connections?.spentSinceTaken(key.socket)` is true, and has destroyed it) is given up: open another as `fetch` does, register it for writing with `this.connected`, and return.",
      "`readResponse`: `const chunk = this.receive(key.socket)`; feed a non-empty chunk to the parser, call `this.parser.end()` for an empty one (the server closed); return while `!this.parser.done` (the loop calls you again). When done: `this.close(this.parser.reusable)` and `this.onFetched(this, this.parser.response())`, outside the `try`, so that an exception in `onFetched` is not taken for a failed fetch.",
    ],
  },
  {
    number: 4,
    title: "Predict the order",
    stage: null,
    file: "04-predict-order.ts",
    task: "predictA to predictE: the order in which each snippet of timers, immediates, ticks, Promise callbacks and awaits logs (the check runs the snippet)",
    source: "learn/lessons/predict-order.ts",
    write: ["predictA", "predictB", "predictC", "predictD", "predictE"],
    checks: ["test/learn/predict-order.test.ts"],
    endsStage: false,
    hints: [
      "The running code runs to its end first. Then all the microtasks, before any macrotask: `process.nextTick` callbacks, then Promise callbacks (`then`, `queueMicrotask`, the rest of an async function after `await`). Then one macrotask (`setTimeout`, `setImmediate`), then the microtasks again.",
      "A microtask queued by a microtask runs in the same emptying of the queue, after the ones already queued: B's `second` comes after `other`, but before the `setImmediate`.",
      "An async function runs synchronously until its first `await`; each `await null` costs one microtask turn, so two async functions awaiting in turn alternate. Inside a `setTimeout` callback, Node's loop is in its timers phase: the check phase (`setImmediate`) comes before the next timers phase.",
    ],
  },
  {
    number: 5,
    title: "A Future and its done callbacks",
    stage: "generators",
    file: "05-future.ts",
    formerFile: "04-future.ts",
    task: "Future.setResult, setException, addDoneCallback and finish: settle once, and hand each done callback to the loop, never calling it on the spot",
    source: "src/generators/futures.ts",
    write: ["Future.setResult", "Future.setException", "Future.addDoneCallback", "Future.finish"],
    checks: ["test/generators/future.test.ts"],
    endsStage: false,
    hints: [
      "A Future is pending until someone calls `setResult` or `setException` once; then it is done for good, and each done callback runs once. Setting a done Future again throws an `InvalidStateError` (from src/kernel/errors.ts; its message is yours to word).",
      "`setResult(value)`: refuse if `this.done()`, store `this.value`, then `this.finish(\"finished\")`. `setException(error)` is the same with `this.error = error` and `this.failed = true`.",
      "`finish(state)`: set `this.state`, publish `resolve` on `loopChannel` when it finished (see `cancel()` for the call), then hand every waiting callback to `this.schedule(callback)` and put the shared empty list `NO_CALLBACKS` back in its place. `schedule` gives it to the loop with `callSoon`: a callback never runs inside `setResult` itself.",
      "`addDoneCallback(fn)`: once done, schedule it at once (`return this.schedule(callback)`), so that nobody who comes late misses the result; while pending, replace `this.callbacks` with a new list that ends with it (`[callback]` when empty, else `[...this.callbacks, callback]`). Never push: the empty list is one frozen array that every Future without callbacks shares.",
    ],
  },
  {
    number: 6,
    title: "Task.step: driving a coroutine",
    stage: "generators",
    file: "06-task.ts",
    formerFile: "05-task.ts",
    task: "Task.step and wakeUp: resume the coroutine (or throw a pending error in at its yield) up to the next Future, settle the Task when it ends",
    source: "src/generators/tasks.ts",
    write: ["Task.step", "Task.wakeUp"],
    checks: ["test/generators/task.test.ts"],
    endsStage: false,
    hints: [
      "A step resumes the coroutine with `this.coro.next()` (or `this.coro.throw(error)` when `this.throwIn` holds an error: take it and set it back to null first), until it yields the next Future. Then the Task adds `this.wakeUp` as that Future's done callback, and the step is over.",
      "When the coroutine throws, the Task ends: call `this.ended()`, then `super.cancel()` for a `CancelledError`, else `super.setException(thrown)`. When it returns (`next.done`), call `this.ended()` and `super.setResult(next.value)`, unless `this.throwIn` was set meanwhile (it cancelled itself): then `super.cancel()`. Use `super.`: the Task's own setResult refuses callers from outside.",
      "What it yielded must be a Future of this loop: anything else is a `TypeError` to throw in at the yield (`this.throwIn ??= new TypeError(…)`, worded as you like: say to use `yield*`): not a Future, the Task itself, or a Future whose `attachLoop(this.loop)` is false. In those cases, and when `throwIn` is set, `this.loop.callSoon(this.step)` so the next step throws it in. Otherwise remember `this.waitingOn = yielded` and add the done callback.",
      "`wakeUp()`: clear `waitingOn` and step. (A `cancel()` that comes once the Future is done lets this wake-up throw the CancelledError in: `step` sees `throwIn`, as asyncio's `_must_cancel` does.) Publish `step` on `loopChannel` after each yield, as `ended()` does with `yielded: null`.",
    ],
  },
  {
    number: 7,
    title: "sleep and callLater",
    stage: "generators",
    file: "07-event-loop.ts",
    formerFile: "06-event-loop.ts",
    task: "EventLoop.callLater and turn: a timer in the heap that wakes a sleeping loop, and a turn that sleeps in Node until the earliest timer instead of spinning",
    source: "src/generators/event-loop.ts",
    write: ["EventLoop.callLater", "EventLoop.turn"],
    checks: ["test/generators/event-loop.test.ts", "test/generators/sleep.test.ts"],
    endsStage: false,
    hints: [
      "`sleep(seconds)` in tasks.ts makes a Future and asks the loop to resolve it later with `loop.callLater(seconds * 1000, timeIsUp)`. So a sleeping Task is a Task waiting on a Future, and the loop must know when to wake up: that is a timer in its heap.",
      "`callLater(delayMs, callback)`: make `new TimerHandle(this.time() + delayMs, this.timerSequence++, callback)` (a negative delay is a moment already past, due before a `callLater(0)`, as in asyncio), push it on `this.timers`, and, unless an iteration is running right now, `this.wake()` so the loop re-plans its sleep. Return the handle (its `cancel()` is how `sleep` cleans up).",
      "`turn` runs one iteration from a Node macrotask, then plans the next: clear `nextImmediate` and `nextTimeout`, `this.iterate()`. If stopping: clear a scheduled immediate, set `running` and `stopping` false, `this.selector.setWakeup(null)`, and return.",
      "Still in `turn`: if callbacks are ready, `this.wake()`. Otherwise look at the earliest timer (`this.timers.peek()`): none, or an iteration already scheduled → return (a socket or a callSoon will wake us). Due already → `wake()`. Else sleep: `this.nextTimeout = setTimeout(this.turn, Math.min(2 ** 31 - 1, wait))`. A turn that always calls `wake()` passes a crawl but spins: the check counts the loop's iterations during a sleep.",
    ],
  },
  {
    number: 8,
    title: "The joinable queue's join",
    stage: "generators",
    file: "08-queue.ts",
    formerFile: "07-queue.ts",
    task: "JoinableQueue.taskDone and join: count unfinished work down, and wake join() when every item put has had its taskDone()",
    source: "src/generators/queues.ts",
    write: ["JoinableQueue.taskDone", "JoinableQueue.join"],
    checks: ["test/generators/joinable-queue.test.ts"],
    endsStage: true,
    hints: [
      "The queue counts unfinished work: `putNowait` adds one, `taskDone` takes one away. `join()` waits until the count is zero, however many items the workers put meanwhile: that is how the crawler knows it is finished (a worker queues the core's next jobs before its own `taskDone()`, so the count never touches zero while work is left). An empty queue is not enough: the items taken may still be in work.",
      "`taskDone()`: throw a `RangeError` when nothing is unfinished (its message is yours to word); else count one down. At zero, resolve the join Future if there is one (`setResult(undefined)`) and forget it, so the queue can be joined again later.",
      "`join()` is a coroutine: when work is unfinished, make the join Future if there is none yet (`this.joinFuture ??= new Future<void>(getRunningLoop(), \"join\")`) and wait on it with `yield*`. With nothing unfinished it returns at once, without yielding.",
    ],
  },
  {
    number: 9,
    title: "The driver: what await compiles to",
    stage: null,
    file: "09-driver.ts",
    task: "co: run a generator as an async function (resume it with each yielded Promise's value, throw its error in at the yield, settle with what it returns or throws)",
    source: "learn/lessons/co.ts",
    write: ["co"],
    checks: ["test/learn/co.test.ts"],
    endsStage: false,
    hints: [
      "`co` returns `new Promise((resolve, reject) => …)` and drives the generator from inside it. One step: resume the generator, look at what it yielded, and arrange for the next step when that settles. `Task.step` in stage 2 does the same with Futures and the loop's `callSoon`; here the Promise callbacks are the loop.",
      "A step: `let next; try { next = resume(); } catch (error) { reject(error); return; }`, where `resume` is `() => coroutine.next(value)` or `() => coroutine.throw(error)`. If `next.done`, `resolve(next.value)`. Else `Promise.resolve(next.value).then(value => step(…next(value)), error => step(…throw(error)))`.",
      "The first step runs at once, inside `co`, as an async function runs up to its first `await`. Do not add a `setTimeout`, a `setImmediate` or an extra `.then`: each resumption must be one microtask, or `co` and `await` no longer take the same turns.",
    ],
  },
  {
    number: 10,
    title: "Stage 3's queue: workers, join and shutdown",
    stage: "asyncawait",
    file: "10-async-queue.ts",
    formerFile: "08-async-queue.ts",
    task: "JoinableQueue.get, taskDone, join and shutdown with Promises: park getters, resolve join() at zero unfinished, and wake every parked getter with QueueShutDown",
    source: "src/asyncawait/joinable-queue.ts",
    write: ["JoinableQueue.get", "JoinableQueue.taskDone", "JoinableQueue.join", "JoinableQueue.shutdown"],
    checks: ["test/asyncawait/joinable-queue.test.ts"],
    endsStage: true,
    hints: [
      "Stage 3's worker (`work()` in src/asyncawait/crawler.ts) loops `await q.get()`, fetch, hand the job back to the core, queue what it hands out, `q.taskDone()`, until `get()` rejects with `QueueShutDown`. The crawl awaits `join()`, then calls `shutdown()` to send the parked workers home. Here there is no Future of ours: a parked `get()` is a Promise whose `resolve` and `reject` wait in `this.getters`.",
      "`get()`: an item waiting → `Promise.resolve(this.take())`; shut down → `Promise.reject(new QueueShutDown())`; else a new Promise whose executor pushes `{ resolve, reject }` on `this.getters` (`putNowait` hands the next item to the oldest one).",
      "`taskDone()` and `join()`: as in exercise 8, with a Promise: `join()` returns `Promise.resolve()` when nothing is unfinished, else the one shared `this.finished` promise, made the first time with its `resolve` kept in `this.resolveFinished`; `taskDone()` throws a `RangeError` when nothing is unfinished, else counts down and, at zero, calls that resolve and forgets both.",
      "`shutdown(immediate)`: set `this.closed`; if immediate, take every waiting item and mark it done; then reject every parked getter with a new `QueueShutDown()` and empty the list (`this.getters.splice(0)`).",
    ],
  },
];

/** The exercise numbered `number`, or undefined. */
export function exerciseNumbered(number: number): Exercise | undefined {
  return exercises.find((exercise) => exercise.number === number);
}

/** The exercises of `exercise`'s stage up to it: whose parts a stage's crawler is built from at its end. */
export function partsOfStage(exercise: Exercise): Exercise[] {
  if (exercise.stage === null) return [exercise];
  return exercises.filter((other) => other.stage === exercise.stage && other.number <= exercise.number);
}
