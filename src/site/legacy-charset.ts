/**
 * Encoding text into the legacy charsets the fixture site serves, so a test can
 * check that a crawler decodes bytes by the charset the response names.
 *
 * @module
 */

/** The legacy charsets {@link encodeLegacy} can produce. */
export type LegacyCharset = "windows-1252" | "shift_jis";

const tables = new Map<LegacyCharset, Map<string, Buffer>>();

/**
 * The bytes of `text` in a legacy charset.
 *
 * Node's `TextEncoder` only speaks UTF-8. Windows-1252 is a single-byte
 * table, written out here; Shift_JIS is Node's `TextDecoder` run backwards:
 * decode every byte and every two-byte sequence, and keep the first byte
 * sequence that gives each character.
 *
 * @throws RangeError when a character has no encoding in `charset`.
 * @example
 * encodeLegacy("café €", "windows-1252") // <63 61 66 e9 20 80>
 */
export function encodeLegacy(text: string, charset: LegacyCharset): Buffer {
  const table = tableFor(charset);
  const parts: Buffer[] = [];
  for (const character of text) {
    const bytes = table.get(character);
    if (bytes === undefined) {
      throw new RangeError(`${JSON.stringify(character)} cannot be encoded in ${charset}`);
    }
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

/**
 * Windows-1252 bytes 0x80–0x9F, where it differs from Latin-1 (WHATWG
 * index-windows-1252; the five undefined bytes map to C1 controls as there).
 * Written out because Node 20's `TextDecoder("windows-1252")` drops these
 * bytes instead of decoding them, so it cannot be run backwards for them.
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function tableFor(charset: LegacyCharset): Map<string, Buffer> {
  const cached = tables.get(charset);
  if (cached !== undefined) return cached;
  const table = charset === "windows-1252" ? windows1252Table() : shiftJisTable();
  tables.set(charset, table);
  return table;
}

function windows1252Table(): Map<string, Buffer> {
  const table = new Map<string, Buffer>();
  for (let byte = 0; byte < 0x100; byte++) {
    const character = byte >= 0x80 && byte < 0xa0 ? WINDOWS_1252_HIGH.charAt(byte - 0x80) : String.fromCharCode(byte);
    table.set(character, Buffer.from([byte]));
  }
  return table;
}

function shiftJisTable(): Map<string, Buffer> {
  const table = new Map<string, Buffer>();
  const decoder = new TextDecoder("shift_jis", { fatal: true });
  const candidates: Buffer[] = [];
  for (let byte = 0; byte < 0x100; byte++) candidates.push(Buffer.from([byte]));
  for (let lead = 0x81; lead <= 0xfc; lead++) {
    for (let trail = 0x40; trail <= 0xfc; trail++) candidates.push(Buffer.from([lead, trail]));
  }
  for (const bytes of candidates) {
    let decoded: string;
    try {
      decoded = decoder.decode(bytes);
    } catch {
      continue; // not a complete character in Shift_JIS
    }
    if ([...decoded].length === 1 && !table.has(decoded)) table.set(decoded, bytes);
  }
  return table;
}
