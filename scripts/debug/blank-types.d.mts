/** Types of scripts/debug/blank-types.mjs, for the tests that import it. */

/** A construct that has no JavaScript left when its types are blanked. */
export declare class BlankTypesError extends Error {
  name: "BlankTypesError";
}

/** `source` (TypeScript) as JavaScript with the same lines and columns: its types replaced by spaces. */
export declare function blankTypes(source: string, fileName: string): string;
