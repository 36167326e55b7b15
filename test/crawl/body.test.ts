import { Buffer } from "node:buffer";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { charsetLabel, decodeContent, decodeText, mediaType } from "../../src/crawl/body.js";
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
      expect(failureOf(() => decodeContent(encoded("br"), PAGE, 1000))).toBe("BadResponse");
      expect(failureOf(() => decodeContent(encoded("gzip, compress"), gzipSync(PAGE), 1000))).toBe("BadResponse");
    });

    it("reports BodyTooLarge for a gzip bomb: a small body that inflates past the limit", () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
      expect(bomb.length).toBeLessThan(100 * 1024);
      expect(failureOf(() => decodeContent(encoded("gzip"), bomb, 1024 * 1024))).toBe("BodyTooLarge");
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
});

describe("charsetLabel", () => {
  const noBody = new Uint8Array(0);

  it("reads the charset parameter of Content-Type, lowercased", () => {
    expect(charsetLabel({ "content-type": "text/html; charset=ISO-8859-1" }, noBody)).toBe("iso-8859-1");
    expect(charsetLabel({ "content-type": "text/html;charset=utf-8 " }, noBody)).toBe("utf-8");
  });

  it("removes quotes and reads the charset parameter wherever it is", () => {
    expect(charsetLabel({ "content-type": 'text/html; q=1; Charset="Shift_JIS"' }, noBody)).toBe("shift_jis");
    expect(charsetLabel({ "content-type": 'text/html; note="a;charset=wrong"; charset=koi8-r' }, noBody)).toBe("koi8-r");
  });

  it("prefers the header to the body", () => {
    const body = Buffer.from('<meta charset="windows-1252">');
    expect(charsetLabel({ "content-type": "text/html; charset=utf-8" }, body)).toBe("utf-8");
  });

  it("reads <meta charset> when the header names none", () => {
    expect(charsetLabel({ "content-type": "text/html" }, Buffer.from('<head><meta charset="Windows-1252">'))).toBe(
      "windows-1252",
    );
    expect(charsetLabel({}, Buffer.from("<META CHARSET=latin1 />"))).toBe("latin1");
    expect(charsetLabel({}, Buffer.from("<meta charset='euc-jp'>"))).toBe("euc-jp");
  });

  it("reads <meta http-equiv=Content-Type content=…charset=…>", () => {
    const body = Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">');
    expect(charsetLabel({}, body)).toBe("shift_jis");
    const reversed = Buffer.from("<meta content='text/html;charset=\"gbk\"' HTTP-EQUIV='content-type'>");
    expect(charsetLabel({}, reversed)).toBe("gbk");
  });

  it("ignores a content charset without http-equiv, and meta tags in comments", () => {
    expect(charsetLabel({}, Buffer.from('<meta name="x" content="charset=koi8-r">'))).toBeNull();
    expect(charsetLabel({}, Buffer.from("<!-- <meta charset=koi8-r> --><p>"))).toBeNull();
  });

  it("looks only at the first 1024 bytes", () => {
    const late = Buffer.from(`${" ".repeat(1024)}<meta charset="koi8-r">`);
    expect(charsetLabel({}, late)).toBeNull();
    const early = Buffer.from(`${" ".repeat(1000)}<meta charset="koi8-r">`);
    expect(charsetLabel({}, early)).toBe("koi8-r");
  });

  it("keeps a label TextDecoder does not know", () => {
    expect(charsetLabel({ "content-type": "text/html; charset=x-no-such-charset" }, noBody)).toBe("x-no-such-charset");
  });

  it("returns null when nothing names a charset", () => {
    expect(charsetLabel({ "content-type": "text/html" }, Buffer.from("<p>plain</p>"))).toBeNull();
    expect(charsetLabel({ "content-type": "text/html; charset=" }, Buffer.from("<p>plain</p>"))).toBeNull();
  });
});

describe("decodeText", () => {
  it("decodes UTF-8 when the label is null", () => {
    expect(decodeText(Buffer.from("café ☕"), null)).toBe("café ☕");
  });

  it("decodes windows-1252, including bytes 0x80-0x9F", () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0x9f]);
    expect(decodeText(bytes, "windows-1252")).toBe("café € “q” Ÿ");
    expect(decodeText(bytes, "latin1")).toBe("café € “q” Ÿ");
  });

  it("decodes shift_jis", () => {
    const bytes = Buffer.from([0x82, 0xa0, 0x93, 0xfa, 0x96, 0x7b]);
    expect(decodeText(bytes, "shift_jis")).toBe("あ日本");
  });

  it("decodes as UTF-8 when the label is unknown", () => {
    expect(decodeText(Buffer.from("café"), "x-no-such-charset")).toBe("café");
  });

  it("replaces malformed bytes instead of throwing", () => {
    expect(decodeText(Buffer.from([0x61, 0xff, 0x62]), "utf-8")).toBe("a\ufffdb");
  });

  it("strips a byte order mark, which wins over the label", () => {
    expect(decodeText(Buffer.from("\ufeffcafé"), "utf-8")).toBe("café");
    expect(decodeText(Buffer.from("\ufeffcafé"), "windows-1252")).toBe("café");
    expect(decodeText(Buffer.from([0xff, 0xfe, 0x68, 0x00, 0xe9, 0x00]), null)).toBe("hé");
    expect(decodeText(Buffer.from([0xfe, 0xff, 0x00, 0x68]), "utf-8")).toBe("h");
  });

  it("keeps a second U+FEFF after the byte order mark", () => {
    expect(decodeText(Buffer.from("\ufeff\ufeffx"), null)).toBe("\ufeffx");
  });
});
