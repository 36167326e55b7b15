/**
 * Encoding text into the legacy charsets the fixture site serves, so a test can
 * check that a crawler decodes bytes by the charset the response names.
 *
 * @module
 */
import iconv from "iconv-lite";

/** The legacy charsets {@link encodeLegacy} can produce. */
export type LegacyCharset = "windows-1252" | "shift_jis";

/**
 * The bytes of `text` in a legacy charset, encoded by iconv-lite (Node's
 * `TextEncoder` only speaks UTF-8).
 *
 * iconv-lite writes `?` for a character the charset lacks; here that is an
 * error instead, found by decoding the bytes back, so a fixture page never
 * differs silently from the text a test expects.
 *
 * @throws RangeError when a character has no encoding in `charset`.
 * @example
 * encodeLegacy("café €", "windows-1252") // <63 61 66 e9 20 80>
 */
export function encodeLegacy(text: string, charset: LegacyCharset): Buffer {
  const bytes = iconv.encode(text, charset);
  if (iconv.decode(bytes, charset) === text) return bytes;
  const missing = [...text].find(function cannotEncode(character) {
    return iconv.decode(iconv.encode(character, charset), charset) !== character;
  });
  throw new RangeError(`${JSON.stringify(missing)} cannot be encoded in ${charset}`);
}
