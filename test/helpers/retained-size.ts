/**
 * The bytes an object alone keeps alive, read from a V8 heap snapshot of
 * this process: what a heap profiler calls its retained size. The count is
 * exact and the same whenever it is taken, where the heap's totals after a
 * `gc()` vary by hundreds of kilobytes between collections.
 *
 * @module
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";

/** The name the object is found by in the snapshot: a property of the global object, set for the snapshot. */
const HANDLE = "__retainedSizeTarget";

/** The parts of a `.heapsnapshot` file read here. */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/**
 * The self sizes of every object reachable from `target` that nothing else
 * reachable from the heap's roots reaches without going through it (weak
 * references aside): the bytes freed if `target` were let go.
 */
export function retainedBytes(target: object): number {
  const folder = mkdtempSync(join(tmpdir(), "retained-"));
  const global = globalThis as Record<string, unknown>;
  try {
    global[HANDLE] = target;
    const file = writeHeapSnapshot(join(folder, "heap.heapsnapshot"));
    return retainedIn(JSON.parse(readFileSync(file, "utf8")) as HeapSnapshot);
  } finally {
    delete global[HANDLE];
    rmSync(folder, { recursive: true, force: true });
  }
}

/** {@link retainedBytes} on a parsed snapshot whose global object has the target as {@link HANDLE}. */
function retainedIn(snapshot: HeapSnapshot): number {
  const { node_fields: nodeFields, edge_fields: edgeFields, edge_types: edgeTypes } = snapshot.snapshot.meta;
  const { nodes, edges, strings } = snapshot;
  const nodeWidth = nodeFields.length;
  const edgeWidth = edgeFields.length;
  const sizeAt = nodeFields.indexOf("self_size");
  const edgeCountAt = nodeFields.indexOf("edge_count");
  const [typeAt, nameAt, toAt] = ["type", "name_or_index", "to_node"].map((field) => edgeFields.indexOf(field));
  const weak = edgeTypes[0].indexOf("weak");
  const property = edgeTypes[0].indexOf("property");
  const count = nodes.length / nodeWidth;
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += nodes[node * nodeWidth + edgeCountAt] * edgeWidth;
    firstEdge[node + 1] = edge;
  }
  let target = -1;
  for (let edge = 0; edge < edges.length && target === -1; edge += edgeWidth) {
    if (edges[edge + typeAt] === property && strings[edges[edge + nameAt]] === HANDLE) target = edges[edge + toAt] / nodeWidth;
  }
  if (target === -1) throw new Error(`the snapshot has no ${HANDLE}`);
  /** Marks in `seen` every node reachable from `from` by strong edges, not going through `skip`. */
  function reach(from: number, skip: number, seen: Uint8Array): void {
    const stack = [from];
    seen[from] = 1;
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      for (let edge = firstEdge[node]; edge < firstEdge[node + 1]; edge += edgeWidth) {
        if (edges[edge + typeAt] === weak) continue;
        const to = edges[edge + toAt] / nodeWidth;
        if (to === skip || seen[to] === 1) continue;
        seen[to] = 1;
        stack.push(to);
      }
    }
  }
  const withoutTarget = new Uint8Array(count);
  reach(0, target, withoutTarget); // Node 0 is the snapshot's root.
  const fromTarget = new Uint8Array(count);
  reach(target, -1, fromTarget);
  let bytes = 0;
  for (let node = 0; node < count; node++) if (fromTarget[node] === 1 && withoutTarget[node] === 0) bytes += nodes[node * nodeWidth + sizeAt];
  return bytes;
}
