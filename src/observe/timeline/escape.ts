/**
 * Escaping for the text a timeline page puts into HTML and SVG.
 *
 * @module
 */

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes `text` for an element's content or a quoted attribute value. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, function entity(character) {
    return ENTITIES[character] ?? character;
  });
}

/** A number of milliseconds as the page prints it: `12.3 ms`. */
export function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}
