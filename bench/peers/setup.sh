#!/usr/bin/env bash
# Sets up the peers that `npm run bench` crawls S1 with beside the stages:
# node-crawler (npm `crawler`) and crawlee (npm `crawlee`, its CheerioCrawler)
# from the npm registry, into a scratch folder outside the repository, and
# checks that Python 3 has aiohttp for the chapter's crawler and scrapy for
# Scrapy (Debian's python3-aiohttp and python3-scrapy; installed with apt-get
# when run as root).
#
# Usage: bash bench/peers/setup.sh [DIR]
# DIR (or $COROUTINE_CRAWLER_PEERS): default $TMPDIR/coroutine-crawler-peers.
# The bench looks in the same place (the same variable, the same default).
set -euo pipefail
dir="${1:-${COROUTINE_CRAWLER_PEERS:-${TMPDIR:-/tmp}/coroutine-crawler-peers}}"
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || printf '{ "name": "coroutine-crawler-peers", "private": true }\n' > package.json
# Exact versions: the figures in docs/benchmarks.md were measured with these.
npm install --no-audit --no-fund --save-exact crawler@2.0.2 crawlee@3.18.1
# Debian's Python, where python3-aiohttp goes (the bench uses it too; $COROUTINE_CRAWLER_PYTHON overrides).
python="${COROUTINE_CRAWLER_PYTHON:-/usr/bin/python3}"
[ -x "$python" ] || python=python3
# Debian's packages for the two Python peers: python3-aiohttp (the chapter's crawler) and
# python3-scrapy (Scrapy 2.8 on Debian 12), each installed only when Python cannot import it.
missing=()
"$python" -c 'import aiohttp' 2>/dev/null || missing+=(python3-aiohttp)
"$python" -c 'import scrapy' 2>/dev/null || missing+=(python3-scrapy)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    echo "setup: the Python peers need ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
  fi
fi
echo "peers set up in $dir"
