/**
 * The `crawl` command's output files: every one checked before the first
 * request, `-o FILE` picking its format from the extension, the CSV rows, and
 * the shipped JSON Schema checked against real `--json` and `--jsonl` output.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csvFields, csvRow, csvText, CSV_COLUMNS } from "../../src/cli/record-lines.js";
import { FETCH_ERRORS, pageRecord } from "../../src/crawl/records.js";
import { FixtureSite } from "../../src/site/index.js";
import { requireBuiltCli, runCli } from "./cli-process.js";
import { schemaErrors } from "./json-schema.js";

const STAGES = ["callbacks", "generators", "asyncawait"] as const;
const SCHEMA_FILE = new URL("../../schema/crawl-result.schema.json", import.meta.url);
const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as Record<string, unknown> & { $defs: Record<string, Record<string, unknown>> };
const strict = { strict: true };

let site: FixtureSite;
let directory: string;

beforeAll(async () => {
  requireBuiltCli();
  // 4 records: "/" links a page whose path has a comma (quoted in CSV), and a redirect to a page it links too.
  site = await FixtureSite.start();
  site.addPage("/", ["/a,b", "/old", "/c"]).addPage("/a,b", []).addRedirect("/old", "/c").addPage("/c", []);
  directory = await mkdtemp(join(tmpdir(), "crawl-outputs-"));
});

afterAll(async () => {
  await site?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe("crawl with an output it cannot write", () => {
  it.each([
    [["--json", "missing/r.json"], "--json", "missing/r.json", "the directory DIR/missing does not exist"],
    [["--jsonl", "missing/r.jsonl"], "--jsonl", "missing/r.jsonl", "the directory DIR/missing does not exist"],
    [["-o", "missing/r.csv"], "-o", "missing/r.csv", "the directory DIR/missing does not exist"],
    [["-o", "missing/r.json"], "--json", "missing/r.json", "the directory DIR/missing does not exist"],
    [["--timeline", "missing/t.html"], "--timeline", "missing/t.html", "the directory DIR/missing does not exist"],
    [["--trace", "missing/t.txt"], "--trace", "missing/t.txt", "the directory DIR/missing does not exist"],
    [["--json", "folder.json"], "--json", "folder.json", "it is a directory"],
    [["--json", "plain-file/r.json"], "--json", "plain-file/r.json", "DIR/plain-file is not a directory"],
  ])("%j refuses it before any request, with status 2", async (args, flag, file, why) => {
    await mkdir(join(directory, "folder.json"), { recursive: true });
    await writeFile(join(directory, "plain-file"), "");
    site.resetCounters();
    const absolute = args.map((arg) => (arg.includes("/") || arg.endsWith(".json") ? join(directory, arg) : arg));
    const { code, stdout, stderr } = await runCli([...absolute, `${site.url}/`]);
    expect(stderr).toBe(`crawl: cannot write ${flag} ${join(directory, file)}: ${why.replace("DIR", directory)}\nTry 'crawl --help'.\n`);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(site.totalRequests).toBe(0);
  });
});

describe.each(STAGES)("crawl -o FILE --stage %s", (stage) => {
  it("writes JSON, JSON Lines and CSV by extension, the same records in each", async () => {
    const [json, jsonl, csv] = ["r.json", "r.jl", "r.csv"].map((name) => join(directory, `${stage}-${name}`));
    const { code, stdout, stderr } = await runCli(["-o", json, "--output", csv, "--stage", stage, `${site.url}/`]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("Done: 4\n");
    const lines = await runCli(["-o", jsonl, "--stage", stage, `${site.url}/`]);
    expect(lines.code).toBe(0);

    const result = JSON.parse(await readFile(json, "utf8")) as { records: Record<string, unknown>[] };
    expect(result.records).toHaveLength(4);
    const jsonLines = (await readFile(jsonl, "utf8")).trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(jsonLines.map((line) => line.url).sort()).toEqual(result.records.map((record) => record.url).sort());

    const rows = (await readFile(csv, "utf8")).split("\r\n").map((row) => row.replace(/,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, ",")); // fetchedAt, an ISO time, left out
    expect(rows.at(-1)).toBe("");
    expect(rows[0]).toBe(CSV_COLUMNS.join(","));
    expect(rows.slice(1, -1)).toHaveLength(4);
    // A field with a comma is quoted (RFC 4180); the redirect's nextUrl is in its column, the root's referrer empty.
    expect(rows).toContain(`"${site.url}/a,b",200,,,,text/html,utf-8,${result.records.find((r) => r.url === `${site.url}/a,b`)?.size},0,0,${site.url}/,1,1,`);
    expect(rows.find((row) => row.startsWith(`${site.url}/old,`))).toBe(`${site.url}/old,302,,,${site.url}/c,,,0,0,0,${site.url}/,1,1,`);
    expect(rows.find((row) => row.startsWith(`${site.url}/,`))?.split(",")[10]).toBe("");
  });
});

describe("CSV rows", () => {
  it("quote a field with a comma, a quote or a line break, doubling its quotes, and end with CRLF", () => {
    expect(csvRow(["plain", "a,b", 'say "hi"', "two\nlines", "cr\r", ""])).toBe('plain,"a,b","say ""hi""","two\nlines","cr\r",\r\n');
  });

  it("put a quote before a text field a spreadsheet would run as a formula (=, +, -, @, tab, CR)", () => {
    const served = { status: 200, size: 5, contentType: "=cmd|' /C calc'!A0", encoding: "@sum(1)" };
    const record = pageRecord("http://h/", served, 0, 0, null, { fetchedAt: "1970-01-01T00:00:00.000Z" });
    const fields = csvFields(record);
    expect([fields[5], fields[6]]).toEqual(["'=cmd|' /C calc'!A0", "'@sum(1)"]);
    expect(["+1", "-2", "\tx", "\rx", "a=b", "http://h/-"].map(csvText)).toEqual(["'+1", "'-2", "'\tx", "'\rx", "a=b", "http://h/-"]);
    expect(csvRow(fields.map(String))).toContain(",'=cmd|' /C calc'!A0,'@sum(1),5,");
  });

  it("leave null fields empty, and carry depth, tries and the ISO time a record was fetched", () => {
    const record = pageRecord("http://h/", { status: 200, size: 5, contentType: "text/html", encoding: "utf-8" }, 2, 1, null, { depth: 3, tries: 2, fetchedAt: "1970-01-01T00:00:00.000Z" });
    expect(csvFields(record)).toEqual(["http://h/", "200", "", "", "", "text/html", "utf-8", "5", "2", "1", "", "3", "2", "1970-01-01T00:00:00.000Z"]);
  });
});

describe("the JSON Schema the package ships", () => {
  it.each(STAGES)("describes every field of stage %s's --json document and --jsonl lines", async (stage) => {
    const { stdout, code } = await runCli(["--json", "-", "--stage", stage, "--max-tries", "1", `${site.url}/`, "http://127.0.0.1:1/"]);
    expect(code).toBe(0);
    const document = JSON.parse(stdout) as { records: unknown[]; robots: unknown[] };
    expect(document.records.length).toBeGreaterThanOrEqual(5);
    expect(document.robots).toHaveLength(2);
    expect(schemaErrors(document, schema, strict)).toEqual([]);

    const lines = await runCli(["--jsonl", "-", "--stage", stage, `${site.url}/`]);
    const parsed = lines.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as unknown);
    expect(parsed).toHaveLength(4);
    for (const line of parsed) expect(schemaErrors(line, schema.$defs.recordLine, strict, schema)).toEqual([]);
  });

  it("describes --compare's document", async () => {
    const { stdout, code } = await runCli(["--compare", "--json", "-", `${site.url}/`]);
    expect(code).toBe(0);
    expect(schemaErrors(JSON.parse(stdout), schema, strict)).toEqual([]);
  });

  it("refuses a document with a field missing, of the wrong type, or unknown", async () => {
    const { stdout } = await runCli(["--json", "-", `${site.url}/`]);
    const good = JSON.parse(stdout) as Record<string, unknown> & { records: Record<string, unknown>[] };
    const one = schema.$defs.crawlResult;
    const { todo: _todo, ...missing } = good;
    expect(schemaErrors(missing, schema, strict)).toContain("$: must match exactly one schema in oneOf");
    expect(schemaErrors(missing, one, strict, schema)).toEqual(["$: must have required property 'todo'"]);
    const wrong = { ...good, records: [{ ...good.records[0], status: "200" }] };
    expect(schemaErrors(wrong, one, strict, schema)).toEqual(["$/records/0/status: must be integer,null"]);
    const undated = { ...good, records: [{ ...good.records[0], fetchedAt: "yesterday" }] };
    expect(schemaErrors(undated, one, strict, schema)).toEqual(['$/records/0/fetchedAt: must match format "date-time"']);
    expect(schemaErrors({ ...good, extra: 1 }, one, strict, schema)).toEqual(["$: must NOT have additional properties (extra)"]);
    expect(schemaErrors({ ...good, extra: 1 }, schema, { strict: false })).toEqual([]);
    expect(schemaErrors({ ...good, schemaVersion: 2 }, schema, strict).length).toBeGreaterThan(0);
  });

  it("names the library's error names, and every field of a record as required (but the page hook's items count)", () => {
    expect(schema.$defs.fetchError.enum).toEqual([...FETCH_ERRORS]);
    const record = schema.$defs.record as { properties: Record<string, unknown>; required: string[] };
    const fields = Object.keys(pageRecord("http://h/", { status: 200, size: 0, contentType: null, encoding: null }, 0, 0));
    expect([...record.required].sort()).toEqual([...fields].sort());
    expect(Object.keys(record.properties).sort()).toEqual([...fields, "items"].sort()); // items: only on the page records of a crawl with an onPage hook.
  });

  it("is in the package: listed in files and exported", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { files: string[]; exports: Record<string, unknown> };
    expect(pkg.files).toContain("schema");
    expect(pkg.exports["./schema/crawl-result.schema.json"]).toBe("./schema/crawl-result.schema.json");
  });
});
