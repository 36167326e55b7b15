/**
 * TypeScript to JavaScript for a debugger: the types are replaced by spaces,
 * so every statement keeps its line and column and the JavaScript Node runs
 * reads, line for line, as the `.ts` file in the editor (types left out).
 *
 * Why: tsx (esbuild) prints each file again, on one line, with an inline
 * source map. DevTools and VS Code read the map; `node inspect` does not, so
 * there `list()` shows that one line and `sb('file.ts', line)` finds no line
 * to break on. Without a map to read, the positions must be right as they are:
 * this is the idea of Node 22's `--experimental-strip-types` and of
 * Bloomberg's ts-blank-space, done with TypeScript's own parser (a
 * devDependency) for the syntax this repository uses.
 *
 * Mechanism: one walk over TypeScript's syntax tree marks the ranges that are
 * types only (annotations with their colon, `<…>` type parameters and
 * arguments, `as T`, `satisfies T`, the non-null `!`, `interface`, `type`,
 * `declare`, overload signatures, `implements`, `import type`, the modifiers
 * `private`, `protected`, `public`, `readonly`, `override`, `abstract`); each
 * character in them becomes a space, line breaks kept. One construct of
 * TypeScript's has a meaning at run time, the parameter property
 * (`constructor(private readonly coro: Coroutine<T>)`): its modifiers are
 * blanked and `this.coro = coro;` is written into the constructor's first
 * line (after `super(…)` in a subclass), the only place where columns move.
 *
 * @remarks `enum` and `namespace`, which generate code, throw a
 * `BlankTypesError` naming the file and line: the repository has none.
 * @see scripts/debug/register.mjs, which runs it on every `.ts` file Node loads; docs/debugging.md
 */
import ts from "typescript";

/** A construct that has no JavaScript left when its types are blanked. */
export class BlankTypesError extends Error {
  name = "BlankTypesError";
}

/** The modifiers that exist for the type checker only. */
const TYPE_MODIFIERS = new Set([
  ts.SyntaxKind.PublicKeyword,
  ts.SyntaxKind.PrivateKeyword,
  ts.SyntaxKind.ProtectedKeyword,
  ts.SyntaxKind.ReadonlyKeyword,
  ts.SyntaxKind.OverrideKeyword,
  ts.SyntaxKind.AbstractKeyword,
  ts.SyntaxKind.InKeyword,
  ts.SyntaxKind.OutKeyword,
]);

/** The declarations whose `type` is an annotation after a colon. */
const ANNOTATED = new Set([
  ts.SyntaxKind.Parameter,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** The functions that are signatures only when they have no body (overloads). */
const MAY_BE_SIGNATURE = new Set([ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.MethodDeclaration, ts.SyntaxKind.Constructor]);

/**
 * `source` (TypeScript) as JavaScript with the same lines and columns.
 *
 * @param source the text of a `.ts` file
 * @param fileName its name, for parsing and for error messages
 * @returns the JavaScript: `source` with its types replaced by spaces
 * @throws {BlankTypesError} on `enum`, `namespace` and `import x = require()`
 */
export function blankTypes(source, fileName) {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2023, true, ts.ScriptKind.TS);
  /** @type {Array<[number, number]>} */
  const blanks = [];
  /** @type {Array<[number, string]>} */
  const inserts = [];

  function blank(start, end) {
    blanks.push([start, end]);
  }

  function blankNode(node) {
    blank(node.getStart(file), node.end);
  }

  /** The token of `kind` among `node`'s children (colon, `<`, `>`, `as`). */
  function child(node, kind, after = -1) {
    return node.getChildren(file).find(function isKind(token) {
      return token.kind === kind && token.pos >= after;
    });
  }

  /** Blanks `<…>`: the type parameters or arguments of `node`. */
  function blankAngles(node, list) {
    const open = node.getChildren(file).find(function opens(token) {
      return token.kind === ts.SyntaxKind.LessThanToken && token.end <= list.pos;
    });
    const close = child(node, ts.SyntaxKind.GreaterThanToken, list.end);
    if (open === undefined || close === undefined) unsupported(node, "type arguments");
    blank(open.getStart(file), close.end);
  }

  function unsupported(node, what) {
    const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
    throw new BlankTypesError(`${fileName}:${line + 1}: ${what} has code of its own: blankTypes cannot run it`);
  }

  /** Blanks an import or export specifier (or a `this` parameter) and the comma after it. */
  function blankSpecifier(specifier) {
    const siblings = ts.isParameter(specifier) ? specifier.parent.parameters : specifier.parent.elements;
    const next = siblings[siblings.indexOf(specifier) + 1];
    if (next !== undefined) return blank(specifier.getStart(file), next.getStart(file));
    const trailingComma = /^\s*,/.exec(source.slice(specifier.end));
    blank(specifier.getStart(file), specifier.end + (trailingComma?.[0].length ?? 0));
  }

  /** Writes `this.x = x;` for each parameter property of `constructor`. */
  function assignParameterProperties(constructor) {
    const properties = constructor.parameters.filter(function isProperty(parameter) {
      return ts.isParameterPropertyDeclaration(parameter, constructor);
    });
    if (properties.length === 0 || constructor.body === undefined) return;
    const names = properties.map(function name(parameter) {
      if (!ts.isIdentifier(parameter.name)) unsupported(parameter, "a destructured parameter property");
      return parameter.name.text;
    });
    const assignments = names.map((name) => ` this.${name} = ${name};`).join("");
    const superCall = constructor.body.statements.find(function callsSuper(statement) {
      return ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression) && statement.expression.expression.kind === ts.SyntaxKind.SuperKeyword;
    });
    inserts.push([superCall === undefined ? constructor.body.getStart(file) + 1 : superCall.end, assignments]);
  }

  function visit(node) {
    switch (node.kind) {
      case ts.SyntaxKind.InterfaceDeclaration:
      case ts.SyntaxKind.TypeAliasDeclaration:
      case ts.SyntaxKind.IndexSignature:
        return blankNode(node);
      case ts.SyntaxKind.EnumDeclaration:
        return unsupported(node, "an enum");
      case ts.SyntaxKind.ModuleDeclaration:
        if (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Ambient) return blankNode(node);
        return unsupported(node, "a namespace");
      case ts.SyntaxKind.ImportEqualsDeclaration:
        if (node.isTypeOnly) return blankNode(node);
        return unsupported(node, "import = require()");
      case ts.SyntaxKind.ImportDeclaration:
        if (node.importClause?.isTypeOnly) return blankNode(node);
        break;
      case ts.SyntaxKind.ExportDeclaration:
        if (node.isTypeOnly) return blankNode(node);
        break;
      case ts.SyntaxKind.ImportSpecifier:
      case ts.SyntaxKind.ExportSpecifier:
        if (node.isTypeOnly) return blankSpecifier(node);
        return;
      case ts.SyntaxKind.HeritageClause:
        if (node.token === ts.SyntaxKind.ImplementsKeyword) return blankNode(node);
        break;
      case ts.SyntaxKind.AsExpression:
      case ts.SyntaxKind.SatisfiesExpression:
        visit(node.expression);
        return blank(node.expression.end, node.end);
      case ts.SyntaxKind.NonNullExpression:
        visit(node.expression);
        return blank(node.end - 1, node.end);
      case ts.SyntaxKind.TypeAssertionExpression:
        blank(node.getStart(file), node.expression.getStart(file));
        return visit(node.expression);
      case ts.SyntaxKind.Parameter:
        if (ts.isIdentifier(node.name) && node.name.text === "this") return blankSpecifier(node);
        break;
    }
    const modifiers = ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [];
    if (modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.DeclareKeyword)) return blankNode(node);
    if (ts.isClassElement(node) && modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.AbstractKeyword)) return blankNode(node);
    if (MAY_BE_SIGNATURE.has(node.kind) && node.body === undefined) return blankNode(node);
    for (const modifier of modifiers) if (TYPE_MODIFIERS.has(modifier.kind)) blankNode(modifier);
    if (node.kind === ts.SyntaxKind.Constructor) assignParameterProperties(node);
    if (node.questionToken !== undefined && (ts.isParameter(node) || ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node))) {
      blankNode(node.questionToken);
    }
    if (node.exclamationToken !== undefined && (ts.isPropertyDeclaration(node) || ts.isVariableDeclaration(node))) blankNode(node.exclamationToken);
    if (node.typeParameters !== undefined) blankAngles(node, node.typeParameters);
    if (node.typeArguments !== undefined) blankAngles(node, node.typeArguments);
    if (ANNOTATED.has(node.kind) && node.type !== undefined) {
      const colon = child(node, ts.SyntaxKind.ColonToken);
      if (colon === undefined) unsupported(node, "a type annotation without a colon");
      blank(colon.getStart(file), node.type.end);
    }
    node.forEachChild(function visitChild(part) {
      // `extends Base<T>` is a value, whose type arguments the visit blanks; other type nodes are blanked whole or skipped.
      if (part === node.type || part.kind === ts.SyntaxKind.TypeParameter || (ts.isTypeNode(part) && !ts.isExpressionWithTypeArguments(part))) return;
      visit(part);
    });
  }

  visit(file);
  const text = source.split("");
  for (const [start, end] of blanks) {
    for (let at = start; at < end; at++) if (text[at] !== "\n" && text[at] !== "\r") text[at] = " ";
  }
  for (const [at, insert] of inserts.sort((a, b) => b[0] - a[0])) text.splice(at, 0, insert);
  return text.join("");
}
