/**
 * The API reference (`npm run docs`, typedoc → docs/api) shows what the
 * guides teach: the protected members behind the public calls (a Task's
 * step, each loop's one iteration, how a Future schedules its done
 * callbacks, the queues' join), each with its doc comment and a link to the
 * line that declares it. One typedoc conversion, in memory (nothing is
 * written to docs/api), serves every check.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Application, Comment, type DeclarationReflection, type ProjectReflection, TSConfigReader, TypeDocReader } from "typedoc";
import { beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A member of the reference: its module, class and name, and the file that declares it. */
type Member = { module: string; owner: string; name: string; file: string };

function member(path: string, file: string): Member {
  const [module = "", owner = "", name = ""] = path.split(".");
  return { module, owner, name, file };
}

/** The members the guides name (guide-callbacks.md, guide-generators.md, guide-asyncawait.md, debugging.md). */
const taught: Member[] = [
  member("generators.Task.step", "src/generators/tasks.ts"),
  member("generators.Task.wakeUp", "src/generators/tasks.ts"),
  member("generators.EventLoop.runOnce", "src/generators/event-loop.ts"),
  member("generators.EventLoop.iterate", "src/generators/event-loop.ts"),
  member("generators.EventLoop.turn", "src/generators/event-loop.ts"),
  member("generators.Future.setResult", "src/generators/futures.ts"),
  member("generators.Future.finish", "src/generators/futures.ts"),
  member("generators.Future.schedule", "src/generators/futures.ts"),
  member("generators.JoinableQueue.join", "src/generators/queues.ts"),
  member("generators.JoinableQueue.joinFuture", "src/generators/queues.ts"),
  member("generators.JoinableQueue.wakeNextGetter", "src/generators/queues.ts"),
  member("callbacks.EventLoop.runOnce", "src/callbacks/event-loop.ts"),
  member("callbacks.EventLoop.dispatch", "src/callbacks/event-loop.ts"),
  member("callbacks.EventLoop.runTimer", "src/callbacks/event-loop.ts"),
  member("callbacks.Fetcher.connected", "src/callbacks/fetcher.ts"),
  member("callbacks.Fetcher.readResponse", "src/callbacks/fetcher.ts"),
  member("callbacks.Fetcher.failed", "src/callbacks/fetcher.ts"),
  member("asyncawait.JoinableQueue.join", "src/asyncawait/joinable-queue.ts"),
  member("asyncawait.JoinableQueue.finished", "src/asyncawait/joinable-queue.ts"),
];

/** The ones that are protected in the source: shown by the reference, kept off outside callers by TypeScript. */
const protectedOnes = new Set([
  "generators.Task.step", "generators.Task.wakeUp", "generators.EventLoop.iterate", "generators.EventLoop.turn",
  "generators.Future.finish", "generators.Future.schedule", "generators.JoinableQueue.joinFuture",
  "generators.JoinableQueue.wakeNextGetter", "callbacks.EventLoop.runOnce", "callbacks.EventLoop.dispatch",
  "callbacks.EventLoop.runTimer", "callbacks.Fetcher.failed", "asyncawait.JoinableQueue.finished",
]);

function label(m: Member): string {
  return `${m.module}.${m.owner}.${m.name}`;
}

let project: ProjectReflection;

beforeAll(async () => {
  const app = await Application.bootstrapWithPlugins({ options: `${root}typedoc.json`, logLevel: "Error" }, [new TypeDocReader(), new TSConfigReader()]);
  const converted = await app.convert();
  if (converted === undefined) throw new Error("typedoc could not convert the project (see its errors above)");
  project = converted;
}, 120_000);

function find(m: Member): DeclarationReflection {
  const found = project.getChildByName([m.module, m.owner, m.name]);
  if (found === undefined) throw new Error(`${label(m)} is not in the reference`);
  return found as DeclarationReflection;
}

/** The doc comment's text: on the declaration for a field, on the signature for a method (arrow properties included). */
function commentText(reflection: DeclarationReflection): string {
  const comment = reflection.comment ?? reflection.signatures?.[0]?.comment;
  return comment === undefined ? "" : Comment.combineDisplayParts(comment.summary);
}

describe("the API reference", () => {
  it.each(taught.map((m) => [label(m), m] as const))("shows %s with its doc comment", (_name, m) => {
    const reflection = find(m);
    expect(commentText(reflection).length).toBeGreaterThan(60);
    expect(reflection.flags.isProtected).toBe(protectedOnes.has(label(m)));
  });

  it("links each member to the line that declares it, in the repository package.json names, at the commit checked out", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { repository: { url: string } };
    const repository = pkg.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
    const commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    for (const m of taught) {
      const source = find(m).sources?.[0];
      expect(source?.fileName, label(m)).toBe(m.file);
      const line = readFileSync(`${root}${m.file}`, "utf8").split("\n")[(source?.line ?? 0) - 1] ?? "";
      expect(line, label(m)).toMatch(new RegExp(`\\b${m.name}\\b`));
      expect(source?.url, label(m)).toBe(`${repository}/blob/${commit}/${m.file}#L${source?.line}`);
    }
  });

  it("leaves the state behind these members private", () => {
    expect(project.getChildByName(["generators", "Task", "waitingOn"])).toBeUndefined();
    expect(project.getChildByName(["generators", "Future", "callbacks"])).toBeUndefined();
  });

  it("opens with the package root, src/index.ts, whose comment names the three stages", () => {
    const first = project.children?.[0];
    expect(first?.name).toBe("coroutine-crawler");
    expect(first?.sources?.[0]?.fileName).toBe("src/index.ts");
    const text = Comment.combineDisplayParts(first?.comment?.summary ?? []);
    for (const stage of ["callbacks", "generators", "asyncawait"]) expect(text).toContain(stage);
  });
});
