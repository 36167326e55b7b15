import { Buffer, constants as bufferConstants } from "node:buffer";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, constants as zlibConstants } from "node:zlib";
import { getEncoding } from "encoding-sniffer";
import fc from "fast-check";
import iconv from "iconv-lite";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeContent, decodeText, mediaType, sniffCharset } from "../../src/crawl/body.js";
import { failureOf } from "../http/failure-of.js";

const PAGE = Buffer.from("<p>Hello, gzip and deflate</p>");


function encoded(encoding: string) {
  return { "content-encoding": encoding };
}

describe("decodeContent", () => {
  describe("refuses bad input", () => {
    it("reports BadResponse for corrupt gzip", () => {
      expect(failureOf(() => decodeContent(encoded("gzip"), Buffer.from("not gzip at all"), 1000))).toBe("BadResponse");
    });

    it("reports BadResponse for truncated gzip", () => {
      const gzip = gzipSync(PAGE);
      expect(failureOf(() => decodeContent(encoded("gzip"), gzip.subarray(0, gzip.length - 10), 1000))).toBe(
        "BadResponse",
      );
    });

    it("reports BadResponse for corrupt deflate", () => {
      const deflate = deflateSync(PAGE);
      deflate[5] = (deflate[5] ?? 0) ^ 0xff;
      expect(failureOf(() => decodeContent(encoded("deflate"), deflate, 1000))).toBe("BadResponse");
    });

    it("reports BadResponse for an encoding it does not know", () => {
      expect(failureOf(() => decodeContent(encoded("zstd"), PAGE, 1000))).toBe("BadResponse");
      expect(failureOf(() => decodeContent(encoded("gzip, compress"), gzipSync(PAGE), 1000))).toBe("BadResponse");
    });

    it("reports BodyTooLarge for a gzip bomb: a small body that inflates past the limit", () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
      expect(bomb.length).toBeLessThan(100 * 1024);
      expect(failureOf(() => decodeContent(encoded("gzip"), bomb, 1024 * 1024))).toBe("BodyTooLarge");
    });

    it("reports BadResponse for corrupt brotli", () => {
      expect(failureOf(() => decodeContent(encoded("br"), PAGE, 1000))).toBe("BadResponse");
    });

    it("reports BodyTooLarge for a brotli bomb: a small body that decompresses past the limit", () => {
      const quick = { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } }; // the default quality takes seconds to compress
      const bomb = brotliCompressSync(Buffer.alloc(64 * 1024 * 1024), quick);
      expect(bomb.length).toBeLessThan(100 * 1024);
      expect(failureOf(() => decodeContent(encoded("br"), bomb, 1024 * 1024))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for deflate that inflates past the limit", () => {
      const deflate = deflateSync(Buffer.alloc(100_000));
      expect(failureOf(() => decodeContent(encoded("deflate"), deflate, 99_999))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for an identity body over the limit", () => {
      expect(failureOf(() => decodeContent({}, Buffer.alloc(11), 10))).toBe("BodyTooLarge");
    });
  });

  it("returns the body as it is without Content-Encoding or with identity", () => {
    expect(decodeContent({}, PAGE, 1000)).toEqual(PAGE);
    expect(decodeContent(encoded("identity"), PAGE, 1000)).toEqual(PAGE);
  });

  it.each(["gzip", "x-gzip", "GZip"])("inflates %s", (encoding) => {
    expect(Buffer.from(decodeContent(encoded(encoding), gzipSync(PAGE), 1000))).toEqual(PAGE);
  });

  it("inflates zlib-wrapped deflate", () => {
    expect(Buffer.from(decodeContent(encoded("deflate"), deflateSync(PAGE), 1000))).toEqual(PAGE);
  });

  it.each(["br", "BR"])("decompresses brotli (%s)", (encoding) => {
    expect(Buffer.from(decodeContent(encoded(encoding), brotliCompressSync(PAGE), 1000))).toEqual(PAGE);
  });

  it("accepts brotli decompressed exactly to the limit", () => {
    expect(decodeContent(encoded("br"), brotliCompressSync(Buffer.alloc(500)), 500)).toHaveLength(500);
  });

  it("inflates raw deflate, as browsers do", () => {
    expect(Buffer.from(decodeContent(encoded("deflate"), deflateRawSync(PAGE), 1000))).toEqual(PAGE);
  });

  it("undoes a list of codings, the last one first", () => {
    const twice = gzipSync(deflateSync(PAGE));
    expect(Buffer.from(decodeContent(encoded("deflate, identity, gzip"), twice, 1000))).toEqual(PAGE);
  });

  it("accepts a decoded body exactly at the limit", () => {
    expect(decodeContent(encoded("gzip"), gzipSync(Buffer.alloc(500)), 500)).toHaveLength(500);
  });

  it("leaves an empty body empty whatever the encoding", () => {
    expect(decodeContent(encoded("gzip"), new Uint8Array(0), 1000)).toHaveLength(0);
  });
});

describe("mediaType", () => {
  it("returns the media type lowercased, without parameters", () => {
    expect(mediaType({ "content-type": " Text/HTML ; charset=UTF-8" })).toBe("text/html");
    expect(mediaType({ "content-type": "application/xml" })).toBe("application/xml");
  });

  it("returns null when Content-Type is absent or empty", () => {
    expect(mediaType({})).toBeNull();
    expect(mediaType({ "content-type": "" })).toBeNull();
    expect(mediaType({ "content-type": " ; charset=utf-8" })).toBeNull();
  });

  it("reads a Content-Type value it has met before (kept once read) as it did the first time", () => {
    const long = `text/html; charset=latin1; x=${"y".repeat(300)}`; // too long to be kept: read each time
    for (let round = 0; round < 3; round++) {
      expect(mediaType({ "content-type": "Text/Plain; Charset=\"Shift_JIS\"" })).toBe("text/plain");
      expect(sniffCharset({ "content-type": "Text/Plain; Charset=\"Shift_JIS\"" }, new Uint8Array())).toEqual({ label: "shift_jis", encoding: "Shift_JIS" });
      expect(mediaType({ "content-type": long })).toBe("text/html");
      expect(sniffCharset({ "content-type": long }, new Uint8Array())).toEqual({ label: "latin1", encoding: "windows-1252" });
    }
  });
});

describe("sniffCharset", () => {
  const noBody = new Uint8Array(0);

  function labelOf(headers: Record<string, string>, body: Uint8Array): string {
    return sniffCharset(headers, body).label;
  }

  it("reads the charset parameter of Content-Type, lowercased", () => {
    expect(labelOf({ "content-type": "text/html; charset=ISO-8859-1" }, noBody)).toBe("iso-8859-1");
    expect(labelOf({ "content-type": "text/html;charset=utf-8 " }, noBody)).toBe("utf-8");
  });

  it("removes quotes and reads the charset parameter wherever it is", () => {
    expect(labelOf({ "content-type": 'text/html; q=1; Charset="Shift_JIS"' }, noBody)).toBe("shift_jis");
    expect(labelOf({ "content-type": 'text/html; note="a;charset=wrong"; charset=koi8-r' }, noBody)).toBe("koi8-r");
  });

  it("prefers the header to the body", () => {
    const body = Buffer.from('<meta charset="windows-1252">');
    expect(sniffCharset({ "content-type": "text/html; charset=utf-8" }, body)).toEqual({ label: "utf-8", encoding: "UTF-8" });
  });

  it("resolves a header label to the encoding the Encoding Standard gives it, and keeps the label as named", () => {
    expect(sniffCharset({ "content-type": "text/html; charset=latin1" }, noBody)).toEqual({
      label: "latin1",
      encoding: "windows-1252",
    });
  });

  it("reads <meta charset> when the header names none, reporting its WHATWG name", () => {
    expect(labelOf({ "content-type": "text/html" }, Buffer.from('<head><meta charset="Windows-1252">'))).toBe(
      "windows-1252",
    );
    expect(labelOf({}, Buffer.from("<META CHARSET=latin1 />"))).toBe("windows-1252");
    expect(sniffCharset({}, Buffer.from("<meta charset='euc-jp'>"))).toEqual({ label: "euc-jp", encoding: "EUC-JP" });
  });

  it("reads <meta http-equiv=Content-Type content=…charset=…>", () => {
    const body = Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">');
    expect(labelOf({}, body)).toBe("shift_jis");
    const reversed = Buffer.from("<meta content='text/html;charset=\"gbk\"' HTTP-EQUIV='content-type'>");
    expect(labelOf({}, reversed)).toBe("gbk");
  });

  it("reads the encoding of an XML declaration", () => {
    expect(labelOf({}, Buffer.from('<?xml version="1.0" encoding="ISO-8859-2"?><urlset>'))).toBe("iso-8859-2");
  });

  it("ignores a content charset without http-equiv, and meta tags in comments", () => {
    expect(labelOf({}, Buffer.from('<meta name="x" content="charset=koi8-r">'))).toBe("utf-8");
    expect(labelOf({}, Buffer.from("<!-- <meta charset=koi8-r> --><p>"))).toBe("utf-8");
  });

  it("skips a <meta> whose label is unknown, and reads x-user-defined as windows-1252 and UTF-16 as UTF-8", () => {
    expect(labelOf({}, Buffer.from('<meta charset="x-no-such-charset"><meta charset="koi8-r">'))).toBe("koi8-r");
    expect(labelOf({}, Buffer.from('<meta charset="x-user-defined">'))).toBe("windows-1252");
    expect(labelOf({}, Buffer.from('<meta charset="utf-16le">'))).toBe("utf-8");
  });

  it("looks only at the first 1024 bytes", () => {
    const late = Buffer.from(`${" ".repeat(1024)}<meta charset="koi8-r">`);
    expect(labelOf({}, late)).toBe("utf-8");
    const early = Buffer.from(`${" ".repeat(1000)}<meta charset="koi8-r">`);
    expect(labelOf({}, early)).toBe("koi8-r");
  });

  it("keeps a header label no decoder knows, and decodes by the body or as UTF-8", () => {
    const unknown = { "content-type": "text/html; charset=x-no-such-charset" };
    expect(sniffCharset(unknown, noBody)).toEqual({ label: "x-no-such-charset", encoding: "UTF-8" });
    expect(sniffCharset(unknown, Buffer.from('<meta charset="koi8-r">'))).toEqual({
      label: "x-no-such-charset",
      encoding: "KOI8-R",
    });
  });

  it("lets a byte order mark choose the encoding, and keeps the header's label", () => {
    const bom = Buffer.from("\ufeffcafé");
    expect(sniffCharset({ "content-type": "text/html; charset=windows-1252" }, bom)).toEqual({
      label: "windows-1252",
      encoding: "UTF-8",
    });
    expect(sniffCharset({}, Buffer.from([0xff, 0xfe, 0x68, 0x00]))).toEqual({ label: "utf-16le", encoding: "UTF-16LE" });
  });

  it("lets a byte order mark override every header label, UTF-16 ones too", () => {
    const utf16be = Buffer.from([0xfe, 0xff, 0x00, 0x68]);
    expect(sniffCharset({ "content-type": "text/html; charset=utf-8" }, utf16be)).toEqual({ label: "utf-8", encoding: "UTF-16BE" });
    const utf16le = Buffer.from([0xff, 0xfe, 0x68, 0x00]);
    expect(sniffCharset({ "content-type": "text/html; charset=shift_jis" }, utf16le)).toEqual({
      label: "shift_jis",
      encoding: "UTF-16LE",
    });
    // Two bytes of the three of a UTF-8 mark are no mark: the header decides.
    expect(sniffCharset({ "content-type": "text/html; charset=koi8-r" }, Buffer.from([0xef, 0xbb, 0x41]))).toEqual({
      label: "koi8-r",
      encoding: "KOI8-R",
    });
  });

  it("prescans the body when the header's label is one the platform's decoder does not take", () => {
    const meta = Buffer.from('<meta charset="koi8-r">');
    expect(sniffCharset({ "content-type": "text/html; charset=x-user-defined" }, meta)).toEqual({
      label: "x-user-defined",
      encoding: "x-user-defined",
    });
    expect(sniffCharset({ "content-type": "text/html; charset=iso-2022-kr" }, meta)).toEqual({
      label: "iso-2022-kr",
      encoding: "replacement",
    });
    expect(sniffCharset({ "content-type": "text/html; charset=win-1252" }, meta)).toEqual({
      label: "win-1252",
      encoding: "KOI8-R",
    });
  });

  it("resolves every label of the Encoding Standard as encoding-sniffer does, with and without a byte order mark", async () => {
    // The standard's labels, from the table encoding-sniffer resolves them with (@exodus/bytes, a file it does not export).
    const sniffer = createRequire(import.meta.url).resolve("encoding-sniffer");
    const labelsFile = join(dirname(createRequire(sniffer).resolve("@exodus/bytes/encoding.js")), "fallback/encoding.labels.js");
    const table = (await import(pathToFileURL(labelsFile).href)) as { default: Record<string, string[]> };
    const labels = Object.entries(table.default).flatMap(([name, aliases]) => [name, ...aliases]);
    expect(labels.length).toBeGreaterThan(220);
    const bodies = [Buffer.from('<meta charset="koi8-r">'), Buffer.from("\ufeff<p>"), Buffer.from([0xfe, 0xff, 0, 0x3c])];
    let compared = 0;
    for (const label of [...labels, "latin-1", "utf-32", "ucs2", "binary", "utf16", "win-1252", "x-no-such-charset"]) {
      for (const body of bodies) {
        const headers = { "content-type": `text/html; charset=${label.toUpperCase()}` };
        const expected = getEncoding(body, { transportLayerEncodingLabel: label, defaultEncoding: "utf-8" });
        expect(sniffCharset(headers, body), label).toEqual({ label, encoding: expected });
        compared += 1;
      }
    }
    expect(compared).toBe((labels.length + 7) * bodies.length);
  });

  it("reports utf-8 when nothing names a charset", () => {
    expect(sniffCharset({ "content-type": "text/html" }, Buffer.from("<p>plain</p>"))).toEqual({
      label: "utf-8",
      encoding: "UTF-8",
    });
    expect(labelOf({ "content-type": "text/html; charset=" }, Buffer.from("<p>plain</p>"))).toBe("utf-8");
  });
});

describe("decodeText", () => {
  it("decodes UTF-8", () => {
    expect(decodeText(Buffer.from("café ☕"), "UTF-8")).toBe("café ☕");
  });

  it("decodes windows-1252, including bytes 0x80-0x9F", () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0x9f]);
    expect(decodeText(bytes, "windows-1252")).toBe("café € “q” Ÿ");
  });

  it("decodes with the encoding a label resolves to: latin1 is windows-1252", () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
    const { encoding } = sniffCharset({ "content-type": "text/html; charset=latin1" }, bytes);
    expect(decodeText(bytes, encoding)).toBe("café €");
  });

  it("decodes Shift_JIS", () => {
    const bytes = Buffer.from([0x82, 0xa0, 0x93, 0xfa, 0x96, 0x7b]);
    expect(decodeText(bytes, "Shift_JIS")).toBe("あ日本");
  });

  it("decodes as UTF-8 when iconv-lite does not know the encoding", () => {
    expect(decodeText(Buffer.from("café"), "x-user-defined")).toBe("café");
    expect(decodeText(Buffer.from("café"), "replacement")).toBe("café");
  });

  it("replaces malformed bytes instead of throwing", () => {
    expect(decodeText(Buffer.from([0x61, 0xff, 0x62]), "UTF-8")).toBe("a\ufffdb");
  });

  it("strips the byte order mark of the encoding the sniffer chose for it", () => {
    const utf8 = Buffer.from("\ufeffcafé");
    expect(decodeText(utf8, sniffCharset({ "content-type": "text/html; charset=windows-1252" }, utf8).encoding)).toBe("café");
    const utf16le = Buffer.from([0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]);
    expect(decodeText(utf16le, sniffCharset({}, utf16le).encoding)).toBe("hé");
    const utf16be = Buffer.from([0xfe, 0xff, 0x00, 0x68]);
    expect(decodeText(utf16be, sniffCharset({ "content-type": "text/html; charset=utf-8" }, utf16be).encoding)).toBe("h");
  });

  it("decodes UTF-8 exactly as iconv-lite does, malformed bytes and byte order marks included", () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: "binary", maxLength: 32 }).map((text) => new Uint8Array(Buffer.from(`\ufeff${text}`))),
    );
    fc.assert(
      fc.property(bytes, (body) => {
        expect(decodeText(body, "UTF-8")).toBe(iconv.decode(Buffer.from(body), "utf-8"));
        expect(decodeText(body, "utf-8")).toBe(iconv.decode(Buffer.from(body), "utf-8"));
      }),
      { numRuns: 300 },
    );
  });

  it("keeps a second U+FEFF after the byte order mark", () => {
    expect(decodeText(Buffer.from("\ufeff\ufeffx"), "UTF-8")).toBe("\ufeffx");
  });

  describe("text too long for a JavaScript string", () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it("throws FetchFailure BodyTooLarge for bytes that decode past the longest string", () => {
      // Zero-filled memory Node refuses to decode before reading it: no real memory is used.
      const bytes = Buffer.alloc(bufferConstants.MAX_STRING_LENGTH + 1);
      expect(failureOf(() => decodeText(bytes, "UTF-8"))).toBe("BodyTooLarge");
    });

    it("names V8's string-length RangeError BodyTooLarge too, as when the decoder joins its last characters", () => {
      vi.spyOn(iconv, "decode").mockImplementation(function joinPastTheLongestString() {
        return "x".repeat(2 ** 30); // the RangeError V8 throws for a string too long, without making one
      });
      expect(failureOf(() => decodeText(Buffer.from("x"), "windows-1252"))).toBe("BodyTooLarge");
    });

    it("lets any other error of the decoder through, RangeErrors included", () => {
      const other = new RangeError("Invalid array length");
      vi.spyOn(iconv, "decode").mockImplementation(function failOtherwise(): string {
        throw other;
      });
      expect(() => decodeText(Buffer.from("x"), "windows-1252")).toThrow(other);
    });
  });
});
