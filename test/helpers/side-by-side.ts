/**
 * Two orders printed side by side, the first difference marked: what the
 * workshop's order checks (exercises 4 and 9) put in their message, where
 * vitest would print both lists cut off after three entries, before the
 * first difference.
 */

/**
 * `left` and `right` as two columns, one line per position, the first
 * position where they differ marked with `←`; an empty string when they are
 * the same.
 */
export function sideBySide(leftTitle: string, left: readonly string[], rightTitle: string, right: readonly string[]): string {
  const rows = Math.max(left.length, right.length);
  let first = -1;
  for (let i = 0; i < rows && first < 0; i++) if (left[i] !== right[i]) first = i;
  if (first < 0) return "";
  const width = Math.max(leftTitle.length, ...left.map((entry) => entry.length), left.length < rows ? "(nothing)".length : 0);
  const line = (index: string, a: string, b: string, mark = ""): string => `${index.padStart(3)}  ${a.padEnd(width)}  ${b}${mark}`.trimEnd();
  const lines = [line("", leftTitle, rightTitle)];
  for (let i = 0; i < rows; i++) lines.push(line(String(i + 1), left[i] ?? "(nothing)", right[i] ?? "(nothing)", i === first ? "   ← the first difference" : ""));
  return lines.join("\n");
}
