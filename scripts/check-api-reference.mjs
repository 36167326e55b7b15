// @ts-check
/**
 * Checks the API reference that `npm run docs` wrote to docs/api/ (CI runs it
 * right after): what a reader sees, not just what typedoc converted.
 *
 * 1. The protected members the guides name are on their class's page, and
 *    the theme's "Protected" filter starts checked, so they are shown (its
 *    default hides them).
 * 2. The project documents are listed in reading order (typedoc.json's
 *    projectDocuments, which must name every docs/*.md), each under its
 *    title (its first `# ` heading), not its file name.
 * 3. A heading with code words keeps them: its entry under "On This Page"
 *    has the words, and the heading renders them as code.
 *
 * Usage: node scripts/check-api-reference.mjs [docs/api]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = resolve(root, process.argv[2] ?? "docs/api");
/** @type {string[]} */
const problems = [];

/** The text of HTML: tags dropped, the few entities typedoc writes decoded. */
function text(html) {
  return html
    .replace(/<[^>]+>/g, "")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** A markdown file's headings (level, text as written), code blocks left out. */
function headings(markdown) {
  return [...markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^(#{1,6}) +(.+?) *$/gm)].map((m) => ({ level: m[1].length, text: m[2] }));
}

// 1. Protected members, shown.
const taught = {
  "classes/generators.Task.html": ["step", "wakeUp"],
  "classes/generators.EventLoop.html": ["iterate", "turn"],
  "classes/callbacks.EventLoop.html": ["runOnce", "dispatch", "runTimer"],
  "classes/generators.Future.html": ["finish", "schedule"],
  "classes/generators.JoinableQueue.html": ["joinFuture", "wakeNextGetter"],
  "classes/asyncawait.JoinableQueue.html": ["finished"],
};
for (const [page, members] of Object.entries(taught)) {
  const html = readFileSync(join(out, page), "utf8");
  if (!/id="tsd-filter-protected"[^>]*\bchecked\b/.test(html)) problems.push(`${page}: the Protected filter starts unchecked, so protected members are hidden`);
  for (const member of members) {
    if (!new RegExp(`<section class="[^"]*tsd-is-protected[^"]*">\\s*<h3 class="tsd-anchor-link" id="${member.toLowerCase()}"`).test(html)) problems.push(`${page}: no protected member ${member}`);
  }
}

// 2. Documents in reading order, under their titles.
const config = JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8"));
/** @type {string[]} */
const listed = config.projectDocuments;
const onDisk = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`);
for (const file of onDisk) if (!listed.includes(file)) problems.push(`typedoc.json: projectDocuments does not list ${file}, so the reference leaves it out`);
const navigationJs = readFileSync(join(out, "assets/navigation.js"), "utf8");
const encoded = /"([A-Za-z0-9+/=]+)"/.exec(navigationJs)?.[1] ?? "";
/** @type {{ text: string; path?: string }[]} */
const navigation = JSON.parse(inflateSync(Buffer.from(encoded, "base64")).toString("utf8"));
const shown = navigation.filter((entry) => entry.path?.startsWith("documents/"));
const expected = listed.map((file) => {
  const title = headings(readFileSync(join(root, file), "utf8")).find((h) => h.level === 1)?.text.replace(/`/g, "");
  return { text: title ?? "(no # heading)", path: `documents/${file.replace(/^docs\//, "").replace(/\.md$/, "")}.html` };
});
const got = shown.map((entry) => `${entry.path} ${entry.text}`).join("\n");
const want = expected.map((entry) => `${entry.path} ${entry.text}`).join("\n");
if (got !== want) problems.push(`the documents, in the order and under the names the navigation shows:\n${got}\nexpected:\n${want}`);

// 3. Headings keep their code words.
for (const file of listed) {
  const page = `documents/${file.replace(/^docs\//, "").replace(/\.md$/, "")}.html`;
  const html = readFileSync(join(out, page), "utf8");
  const pageNavigation = html.slice(html.indexOf("tsd-page-navigation"));
  const entries = new Set([...pageNavigation.matchAll(/<a href="#[^"]*"><span>(.*?)<\/span><\/a>/g)].map((m) => text(m[1])));
  for (const heading of headings(readFileSync(join(root, file), "utf8"))) {
    if (!heading.text.includes("`") || heading.level === 1) continue;
    const plain = heading.text.replace(/`/g, "");
    if (!entries.has(plain)) problems.push(`${page}: "On This Page" has no entry "${plain}"`);
    const code = /`([^`]+)`/.exec(heading.text)?.[1] ?? "";
    const rendered = [...html.matchAll(/<h[1-6] id="[^"]*" class="tsd-anchor-link">(.*?)<a href/g)].map((m) => m[1]);
    const escaped = code.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    if (!rendered.some((h) => text(h) === plain && h.includes(`<code>${escaped}</code>`))) problems.push(`${page}: the heading "${heading.text}" does not render \`${code}\` as code`);
  }
}

if (problems.length > 0) {
  console.error(`check-api-reference: ${problems.length} problem(s) in ${out}:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log(`check-api-reference: ${out}: protected members shown, ${listed.length} documents in reading order under their titles, code words kept in headings`);
