"""The chapter's asyncio crawler, as a peer in `npm run bench`.

Adapted from "A Web Crawler With asyncio Coroutines" by A. Jesse Jiryu Davis
and Guido van Rossum, in *500 Lines or Less* (The Architecture of Open Source
Applications), licensed CC BY 3.0: the same shape (a Crawler with max_tasks
workers on an asyncio.Queue, a seen set, redirects followed by the crawler,
links found by a regular expression and kept on the root's host) written
with today's async/await and aiohttp instead of Python 3.4's
`@asyncio.coroutine` and `yield from`. Not the authors' code verbatim.

Usage: python3 chapter_crawler.py ROOT_URL MAX_TASKS
Prints one JSON line: {"pages", "cpuMs", "peakRssBytes"}; the CPU time and
peak RSS are the whole process's (interpreter start-up and imports included).
"""
import asyncio
import json
import re
import resource
import sys
import urllib.parse

import aiohttp

HREF = re.compile(r"""(?i)href=["']([^"']+)""")


class Crawler:
    def __init__(self, root_url, max_tasks, max_redirect=10):
        self.max_tasks = max_tasks
        self.max_redirect = max_redirect
        self.root_host = urllib.parse.urlparse(root_url).hostname
        self.q = asyncio.Queue()
        self.seen_urls = {root_url}
        self.done = 0
        self.q.put_nowait((root_url, self.max_redirect))

    async def crawl(self):
        """Run the crawler until all work is done."""
        # aiohttp's ClientSession does connection pooling and HTTP keep-alives for us.
        connector = aiohttp.TCPConnector(limit=self.max_tasks)
        async with aiohttp.ClientSession(connector=connector) as self.session:
            workers = [asyncio.create_task(self.work()) for _ in range(self.max_tasks)]
            # When all work is done, exit.
            await self.q.join()
            for w in workers:
                w.cancel()

    async def work(self):
        while True:
            url, max_redirect = await self.q.get()
            try:
                # Download page and add new links to self.q.
                await self.fetch(url, max_redirect)
            finally:
                self.q.task_done()

    async def fetch(self, url, max_redirect):
        # Handle redirects ourselves.
        async with self.session.get(url, allow_redirects=False) as response:
            self.done += 1
            if response.status in (300, 301, 302, 303, 307, 308):
                if max_redirect > 0:
                    next_url = urllib.parse.urljoin(url, response.headers["location"])
                    if next_url in self.seen_urls:
                        # We have been down this path before.
                        return
                    # Remember we have seen this URL.
                    self.seen_urls.add(next_url)
                    # Follow the redirect. One less redirect remains.
                    self.q.put_nowait((next_url, max_redirect - 1))
            else:
                links = await self.parse_links(url, response)
                # Python set-logic:
                for link in links.difference(self.seen_urls):
                    self.q.put_nowait((link, self.max_redirect))
                self.seen_urls.update(links)

    async def parse_links(self, url, response):
        links = set()
        body = await response.read()
        if response.status == 200 and response.content_type == "text/html":
            text = body.decode("utf-8", "replace")
            for href in HREF.findall(text):
                normalized = urllib.parse.urljoin(url, href.replace("&amp;", "&"))
                defragmented, _ = urllib.parse.urldefrag(normalized)
                parts = urllib.parse.urlparse(defragmented)
                if parts.scheme in ("http", "https") and parts.hostname == self.root_host:
                    links.add(defragmented)
        return links


def main():
    crawler = Crawler(sys.argv[1], int(sys.argv[2]))
    asyncio.run(crawler.crawl())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "pages": crawler.done,
        "cpuMs": (usage.ru_utime + usage.ru_stime) * 1000,
        # Linux reports ru_maxrss in KiB.
        "peakRssBytes": usage.ru_maxrss * 1024,
    }))


if __name__ == "__main__":
    main()
