#!/usr/bin/env node
//! A copy of ../shared/bench/site-server.mjs, the yardstick of issue 39 (the plainest fast
//! crawler and the site it was measured on), kept here for clones that lack
//! ../shared. Kept unchanged below these lines, so figures measured with either
//! copy compare: test/bench.test.ts checks that the two are equal once the
//! lines starting with "//!" are taken out. Do not edit; copy it again instead.
// Deterministic synthetic website for crawler benchmarks. Dependency-free (node:http only).
//
//   node site-server.mjs [--port 0] [--host 127.0.0.1] [--pages 2000] [--links 10]
//        [--delay 0] [--size 2000] [--redirect-every 0] [--notfound-every 0] [--seed 1]
//   node site-server.mjs --list [same site flags]   -> prints the expected crawl counts as JSON
//
// Site layout (all pages text/html; charset=utf-8):
//   page 0 is "/", page i>0 is "/p/i". Page i links to page i+1 (so every page is reachable
//   from "/") plus K-1 pages drawn by a PRNG seeded with (seed, i). Link forms rotate among
//   absolute ("http://<Host header>/p/j"), root-relative ("/p/j") and document-relative ("j",
//   "../p/j", ...).
//   --redirect-every M: every page j>0 with j % M == 0 lives at "/p/j/"; links point at "/p/j",
//     which answers 301 with Location "/p/j/".
//   --notfound-every M: every page i with i % M == 0 also links to "/missing/i", which answers 404.
//   --delay MS holds every response (including 301/404) MS milliseconds before answering.
// Not linked, for checking a crawl: GET /__stats (JSON counters), GET /__reset (zero them).

import http from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function parseArgs(argv) {
  const opts = {
    port: 0, host: '127.0.0.1', pages: 2000, links: 10, delay: 0, size: 2000,
    'redirect-every': 0, 'notfound-every': 0, seed: 1, list: false,
  };
  for (let a = 0; a < argv.length; a++) {
    let arg = argv[a];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    arg = arg.slice(2);
    let value;
    const eq = arg.indexOf('=');
    if (eq >= 0) { value = arg.slice(eq + 1); arg = arg.slice(0, eq); }
    if (!(arg in opts)) throw new Error(`unknown flag --${arg}`);
    if (typeof opts[arg] === 'boolean') { opts[arg] = true; continue; }
    if (value === undefined) value = argv[++a];
    if (value === undefined) throw new Error(`--${arg} needs a value`);
    opts[arg] = arg === 'host' ? value : Number(value);
    if (arg !== 'host' && !Number.isFinite(opts[arg])) throw new Error(`--${arg} needs a number`);
  }
  if (opts.pages < 1) throw new Error('--pages must be >= 1');
  if (opts.links < 1) throw new Error('--links must be >= 1');
  return opts;
}

// mulberry32: small, fast, deterministic PRNG.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildSite(opts) {
  const N = opts.pages, K = opts.links, R = opts['redirect-every'], NF = opts['notfound-every'];
  const redirected = (j) => R > 0 && j > 0 && j % R === 0;
  // Canonical path where page j's content is served, and the path links use for it.
  const servedPath = (j) => (j === 0 ? '/' : redirected(j) ? `/p/${j}/` : `/p/${j}`);
  const linkPath = (j) => (j === 0 ? '/' : `/p/${j}`);
  const targets = new Array(N);
  for (let i = 0; i < N; i++) {
    const rnd = mulberry32((opts.seed * 0x9e3779b1) ^ (i * 0x85ebca6b));
    const t = [];
    if (i + 1 < N) t.push(i + 1);
    while (t.length < K) t.push(Math.floor(rnd() * N));
    targets[i] = t;
  }
  const missing = (i) => NF > 0 && i % NF === 0;
  return { N, K, redirected, servedPath, linkPath, targets, missing };
}

export function expected(opts) {
  const site = buildSite(opts);
  const level = new Int32Array(site.N).fill(-1);
  const fifo = [0];
  level[0] = 0;
  let pages = 0, redirects = 0, notfound = 0, links = 0, depth = 0;
  for (let h = 0; h < fifo.length; h++) {
    const i = fifo[h];
    pages++;
    depth = Math.max(depth, level[i]);
    if (site.redirected(i)) redirects++;
    if (site.missing(i)) notfound++;
    for (const j of site.targets[i]) {
      links++;
      if (level[j] < 0) { level[j] = level[i] + 1; fifo.push(j); }
    }
  }
  // fetches: distinct URLs a crawler that handles redirects itself (one fetch per hop) requests.
  // depth: BFS levels below "/"; with --delay D no crawler can finish in less than (depth+1)*D.
  return { pages200: pages, redirects, notfound, fetches: pages + redirects + notfound, links, depth };
}

function relativeHref(fromPath, target) {
  const dir = fromPath.endsWith('/') ? fromPath : fromPath.slice(0, fromPath.lastIndexOf('/') + 1);
  if (target.startsWith(dir) && target !== dir) return target.slice(dir.length);
  const depth = dir.split('/').length - 2; // "/" -> 0, "/p/" -> 1, "/p/3/" -> 2
  return '../'.repeat(depth) + target.slice(1) || './';
}

const PAD_WORDS = ('lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ' +
  'incididunt ut labore et dolore magna aliqua café naïve résumé').split(' ');

function renderPage(site, opts, i, host) {
  const self = site.servedPath(i);
  const parts = [`<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Page ${i}</title></head>\n<body><h1>Page ${i}</h1>\n<ul>\n`];
  const t = site.targets[i];
  for (let n = 0; n < t.length; n++) {
    const target = site.linkPath(t[n]);
    const form = (i + n) % 3;
    const href = form === 0 ? `http://${host}${target}` : form === 1 ? target : relativeHref(self, target);
    parts.push(`<li><a href="${href}">page ${t[n]}</a></li>\n`);
  }
  if (site.missing(i)) parts.push(`<li><a href='/missing/${i}'>gone ${i}</a></li>\n`);
  parts.push('</ul>\n<p>');
  let len = parts.reduce((s, p) => s + p.length, 0) + 20;
  const rnd = mulberry32(i + 7);
  while (len < opts.size) {
    const w = PAD_WORDS[Math.floor(rnd() * PAD_WORDS.length)] + ' ';
    parts.push(w);
    len += w.length;
  }
  parts.push('</p>\n</body></html>\n');
  return Buffer.from(parts.join(''), 'utf8');
}

export function startServer(opts, onListening) {
  const site = buildSite(opts);
  const cache = new Map(); // host -> Array<Buffer>
  const stats = { requests: 0, status: {}, paths: new Set() };
  const byPath = new Map();
  for (let j = 0; j < site.N; j++) {
    byPath.set(site.servedPath(j), { kind: 200, page: j });
    if (site.redirected(j)) byPath.set(site.linkPath(j), { kind: 301, to: site.servedPath(j) });
  }
  const notFoundBody = Buffer.from('<!DOCTYPE html>\n<html><head><title>404</title></head><body>not found</body></html>\n');
  const ctype = 'text/html; charset=utf-8';

  function send(res, status, headers, body) {
    stats.status[status] = (stats.status[status] || 0) + 1;
    headers['Content-Length'] = body.length;
    res.writeHead(status, headers);
    res.end(body);
  }

  const server = http.createServer((req, res) => {
    const path = req.url;
    if (path === '/__stats' || path === '/__reset') {
      if (path === '/__reset') { stats.requests = 0; stats.status = {}; stats.paths = new Set(); }
      const body = Buffer.from(JSON.stringify({ requests: stats.requests, status: stats.status, distinctPaths: stats.paths.size }) + '\n');
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
      return;
    }
    stats.requests++;
    stats.paths.add(path);
    const host = req.headers.host || `${opts.host}:${server.address().port}`;
    const respond = () => {
      const route = req.method === 'GET' || req.method === 'HEAD' ? byPath.get(path) : undefined;
      if (!route) return send(res, 404, { 'Content-Type': ctype }, notFoundBody);
      if (route.kind === 301) {
        return send(res, 301, { Location: route.to, 'Content-Type': ctype },
          Buffer.from(`<a href="${route.to}">moved</a>\n`));
      }
      let pages = cache.get(host);
      if (!pages) { pages = new Array(site.N); cache.set(host, pages); }
      const body = pages[route.page] || (pages[route.page] = renderPage(site, opts, route.page, host));
      send(res, 200, { 'Content-Type': ctype }, body);
    };
    if (opts.delay > 0) setTimeout(respond, opts.delay);
    else respond();
  });
  server.maxConnections = 1 << 20;
  server.keepAliveTimeout = 10_000;
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  server.listen({ port: opts.port, host: opts.host, backlog: 4096 }, () => onListening(server));
  return { server, stats };
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`site-server: ${e.message}`);
    process.exit(2);
  }
  if (opts.list) {
    console.log(JSON.stringify(expected(opts)));
  } else {
    const { server, stats } = startServer(opts, (s) => console.log(`listening ${s.address().port}`));
    const stop = () => {
      console.error(`site-server: served ${stats.requests} requests, ${stats.paths.size} distinct paths, status ${JSON.stringify(stats.status)}`);
      server.close();
      server.closeAllConnections();
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  }
}
