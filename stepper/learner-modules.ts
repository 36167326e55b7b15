/**
 * A Node module hook (`module.register`) that loads a learner's files in
 * place of the library's: the workshop's swap (learn/workshop/vitest.config.ts,
 * `learnerModules`) for a process that is not vitest, so the stepper records
 * a crawl of the learner's own parts. Each import is resolved as usual (tsx's
 * hooks come after this one), and a library file that has a learner's copy
 * becomes that copy; the copy's own imports point back at the library, and
 * are swapped in turn.
 *
 * @module
 */

/** What `module.register` hands the hook: library file URL → learner file URL. */
export interface LearnerModulesData {
  swaps: Array<[string, string]>;
}

interface Resolved {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}

let swaps = new Map<string, string>();

/** Takes the swaps (module hooks' `initialize`). */
export function initialize(data: LearnerModulesData): void {
  swaps = new Map(data.swaps);
}

/** Resolves as the next hook does, then puts the learner's file in place of a library file it has a copy of. */
export async function resolve(specifier: string, context: object, nextResolve: (specifier: string, context: object) => Promise<Resolved>): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  const swapped = swaps.get(resolved.url);
  return swapped === undefined ? resolved : { ...resolved, url: swapped };
}
