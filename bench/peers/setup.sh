#!/usr/bin/env bash
# Sets up the peers that `npm run bench` crawls S1 with beside the stages:
# node-crawler (npm `crawler`) and crawlee (npm `crawlee`, its CheerioCrawler)
# from the npm registry, into a scratch folder outside the repository, and
# checks that Python 3 has aiohttp for the chapter's crawler (Debian's
# python3-aiohttp; installed with apt-get when run as root).
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
if ! "$python" -c 'import aiohttp' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-aiohttp
  else
    echo "setup: the chapter's crawler needs aiohttp: sudo apt-get install python3-aiohttp" >&2
  fi
fi
echo "peers set up in $dir"
