import { describe, expect, it } from "vitest";
import { encodeLegacy } from "../../src/site/legacy-charset.js";

describe("encodeLegacy", () => {
  it("encodes windows-1252, including the bytes where it differs from Latin-1", () => {
    expect([...encodeLegacy("café €“”", "windows-1252")]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x93, 0x94]);
  });

  it("encodes shift_jis in two bytes per kanji and one per ASCII letter", () => {
    const bytes = encodeLegacy("日本語/a", "shift_jis");
    expect([...bytes]).toEqual([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x2f, 0x61]);
    expect(new TextDecoder("shift_jis").decode(bytes)).toBe("日本語/a");
  });

  it("throws RangeError for a character the charset lacks", () => {
    expect(() => encodeLegacy("日", "windows-1252")).toThrow(RangeError);
    expect(() => encodeLegacy("€", "shift_jis")).toThrow('"€" cannot be encoded in shift_jis');
  });
});
