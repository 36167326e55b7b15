/**
 * Makes a learner's file from a library module: the module as it is, its
 * imports pointed back at the library, and the bodies the exercise names
 * replaced by a stub that says whose turn it is. The same walk over the
 * module's syntax finds the library's own bodies for `--solution`.
 *
 * @module
 */
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";
import type { Exercise } from "./exercises.js";

/** One body the learner writes: where it is in the module, and its text. */
export interface Body {
  /** `Class.member` or a function's name, as the exercise lists it. */
  readonly name: string;
  /** The line of the declaration, from 1, in the library's module. */
  readonly line: number;
  /** The whole declaration, its doc comment left out. */
  readonly declaration: string;
  /** Where the body's braces start and end in the module's text. */
  readonly start: number;
  readonly end: number;
}

/**
 * The bodies `names` lists in `text`, in the order they appear. Throws when a
 * name is missing: the exercise no longer matches the library.
 */
export function findBodies(text: string, fileName: string, names: readonly string[]): Body[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Body[] = [];
  function add(name: string, declaration: ts.Node, body: ts.Node | undefined): void {
    if (!names.includes(name) || body === undefined || !ts.isBlock(body)) return;
    const line = file.getLineAndCharacterOfPosition(declaration.getStart(file)).line + 1;
    found.push({ name, line, declaration: text.slice(declaration.getStart(file), declaration.end), start: body.getStart(file), end: body.end });
  }
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined) add(statement.name.text, statement, statement.body);
    if (!ts.isClassDeclaration(statement) || statement.name === undefined) continue;
    for (const member of statement.members) {
      if (member.name === undefined || !ts.isIdentifier(member.name)) continue;
      const name = `${statement.name.text}.${member.name.text}`;
      if (ts.isMethodDeclaration(member) || ts.isGetAccessorDeclaration(member)) add(name, member, member.body);
      else if (ts.isPropertyDeclaration(member) && member.initializer !== undefined && (ts.isArrowFunction(member.initializer) || ts.isFunctionExpression(member.initializer))) {
        add(name, member, member.initializer.body);
      }
    }
  }
  const missing = names.filter((name) => !found.some((body) => body.name === name));
  if (missing.length > 0) throw new Error(`${fileName} has no ${missing.join(", ")}: the workshop's exercise list no longer matches the library`);
  return found;
}

/** What a learner's file is made as: with the exercise's bodies to write, or the library's own (to check the checks). */
export type Version = "stub" | "solution";

/**
 * The text of `exercise`'s learner file, to be written in `learnerDir`:
 * `source` (the library module's text) with its relative imports made
 * relative to `learnerDir`, and, for a stub, the bodies to write replaced.
 */
export function learnerFile(exercise: Exercise, source: string, repo: string, learnerDir: string, version: Version): string {
  const sourcePath = resolve(repo, exercise.source);
  let text = source;
  if (version === "stub") {
    const bodies = findBodies(source, exercise.source, exercise.write);
    for (const body of [...bodies].reverse()) text = text.slice(0, body.start) + stubBody(exercise, body, source) + text.slice(body.end);
  }
  text = text.replace(/(\bfrom\s+|\bimport\s*\(\s*|^import\s+)(["'])(\.{1,2}\/[^"']+)\2/gm, function pointAtLibrary(_all, before: string, quote: string, specifier: string) {
    const target = resolve(dirname(sourcePath), specifier);
    let path = relative(learnerDir, target).split("\\").join("/");
    if (!path.startsWith(".")) path = `./${path}`;
    return `${before}${quote}${path}${quote}`;
  });
  return header(exercise, version) + text;
}

/** The comment at the top of a learner's file: which exercise, what to write, how to check it. */
function header(exercise: Exercise, version: Version): string {
  const what = version === "stub" ? `Write the bodies of ${exercise.write.join(", ")}: each one says where it is.` : "The library's own code, unchanged (the workshop checks its checks with it).";
  return [
    `// Exercise ${exercise.number} of the workshop: ${exercise.title}.`,
    `// A copy of ${exercise.source}, its imports pointing back at the library. ${what}`,
    `// Check it: npm run learn -- ${exercise.number}   A hint: npm run learn -- ${exercise.number} --hint   The library's code: npm run learn -- ${exercise.number} --solution`,
    "",
  ].join("\n");
}

/** The stub that stands for one body: the first hint, and an error that says what is not written yet. */
function stubBody(exercise: Exercise, body: Body, source: string): string {
  const lineStart = source.lastIndexOf("\n", body.start) + 1;
  const indent = /^\s*/.exec(source.slice(lineStart, body.start))?.[0] ?? "";
  const inner = `${indent}  `;
  const message = `${body.name} is not written yet (exercise ${exercise.number}, learn/${exercise.file})`;
  return [
    "{",
    `${inner}// Yours to write. The doc comment above says what it does; \`npm run learn -- ${exercise.number} --hint\` gives a hint.`,
    `${inner}throw new Error(${JSON.stringify(message)});`,
    `${indent}}`,
  ].join("\n");
}
