#!/usr/bin/env node
//! A copy of ../shared/bench/ideal-crawler.mjs, the yardstick of issue 39 (the plainest fast
//! crawler and the site it was measured on), kept here for clones that lack
//! ../shared. Kept unchanged below these lines, so figures measured with either
//! copy compare: test/bench.test.ts checks that the two are equal once the
//! lines starting with "//!" are taken out. Do not edit; copy it again instead.
// Minimal "ideal" async/await crawler: N workers, a joinable queue, a Set of seen URLs,
// regex link extraction (the chapter's), manual redirects (one fetch per hop, like the chapter).
//   node ideal-crawler.mjs ROOT_URL [--tasks 100] [--client fetch|http|undici]
// --client fetch: Node's global fetch; http: node:http with a keep-alive Agent (both built in);
// undici: undici.request, loaded from $UNDICI (a path to undici's index.js).
// Prints one JSON line: {"fetched":..,"ok":..,"redirects":..,"other":..,"errors":..,"seconds":..}.
import http from 'node:http';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const root = new URL(args[0]);
const tasks = Number(opt('--tasks', 100));
const client = opt('--client', 'fetch');

let get; // (url) -> Promise<{status, location, type, text()}>
if (client === 'fetch') {
  get = async (url) => {
    const r = await fetch(url, { redirect: 'manual' });
    return { status: r.status, location: r.headers.get('location'), type: r.headers.get('content-type') || '', text: () => r.text() };
  };
} else if (client === 'http') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: tasks });
  get = (url) => new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode, location: res.headers.location, type: res.headers['content-type'] || '',
        text: async () => Buffer.concat(chunks).toString('utf8') }));
    }).on('error', reject);
  });
} else if (client === 'undici') {
  const undici = await import(process.env.UNDICI || 'undici');
  const dispatcher = new undici.Agent({ connections: tasks });
  get = async (url) => {
    const r = await undici.request(url, { dispatcher });
    return { status: r.statusCode, location: r.headers.location, type: r.headers['content-type'] || '', text: () => r.body.text() };
  };
} else throw new Error(`unknown --client ${client}`);

const queue = [], waiters = [], joiners = [];
let head = 0, unfinished = 0;
const put = (x) => { unfinished++; const w = waiters.shift(); if (w) w(x); else queue.push(x); };
const take = () => (head < queue.length ? Promise.resolve(queue[head++]) : new Promise((r) => waiters.push(r)));
const taskDone = () => { if (--unfinished === 0) for (const r of joiners.splice(0)) r(); };

const seen = new Set();
const stats = { fetched: 0, ok: 0, redirects: 0, other: 0, errors: 0 };
const add = (url) => { if (!seen.has(url)) { seen.add(url); put(url); } };
const allowed = (u) => (u.protocol === 'http:' || u.protocol === 'https:') && u.host === root.host;

async function fetchOne(url) {
  const r = await get(url);
  stats.fetched++;
  if (r.status >= 300 && r.status < 400 && r.location) {
    stats.redirects++;
    await r.text();
    const next = new URL(r.location, url); next.hash = '';
    if (allowed(next)) add(next.href);
    return;
  }
  const body = await r.text();
  if (r.status !== 200 || !r.type.startsWith('text/html')) { stats.other++; return; }
  stats.ok++;
  for (const m of body.matchAll(/href=["']([^\s"'<>]+)/gi)) {
    let u;
    try { u = new URL(m[1], url); } catch { continue; }
    u.hash = '';
    if (allowed(u)) add(u.href);
  }
}

async function work() {
  for (;;) {
    const url = await take();
    try { await fetchOne(url); } catch (e) { stats.errors++; if (stats.errors < 5) console.error(`${url}: ${e.message}`); }
    taskDone();
  }
}

const t0 = performance.now();
add(root.href);
for (let i = 0; i < tasks; i++) work();
await new Promise((r) => (unfinished === 0 ? r() : joiners.push(r)));
console.log(JSON.stringify({ client, tasks, ...stats, seconds: +((performance.now() - t0) / 1000).toFixed(3) }));
process.exit(0);
