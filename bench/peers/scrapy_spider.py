"""Scrapy as a peer in `npm run bench` (issue 39).

A spider that crawls every page reachable from ROOT_URL on its host name, as
the other peers do: links from each page's <a href> (Scrapy's
`response.follow_all(css="a")`), kept to the root's host name by
`allowed_domains` (any port), fragments ignored and each URL fetched once by
Scrapy's own duplicate filter. MAX_TASKS requests at once, all to the one
host: no robots.txt, no delay, AutoThrottle off, no retries, no HTTP cache,
log level WARNING; no item is made or kept, the spider only counts the
responses it handled.

Usage: python3 scrapy_spider.py ROOT_URL MAX_TASKS
Prints one JSON line: {"pages", "cpuMs", "peakRssBytes"}; the CPU time and
peak RSS are the whole process's (interpreter start-up and imports included).
Measured with Debian's python3-scrapy 2.8 (bench/peers/setup.sh).
"""
import json
import resource
import sys
import urllib.parse

import scrapy
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "bench-peer"

    def __init__(self, root_url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [root_url]
        # The OffsiteMiddleware compares host names, ports aside: the same rule as the other peers'.
        self.allowed_domains = [urllib.parse.urlparse(root_url).hostname]
        self.pages = 0

    def start_requests(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed)

    def parse(self, response):
        self.pages += 1
        if isinstance(response, scrapy.http.HtmlResponse):
            yield from response.follow_all(css="a", callback=self.parse, errback=self.failed)

    def failed(self, failure):
        self.pages += 1


def main():
    root, max_tasks = sys.argv[1], int(sys.argv[2])
    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": max_tasks,
            # High enough that the one host never holds a request back.
            "CONCURRENT_REQUESTS_PER_DOMAIN": max_tasks,
            "CONCURRENT_REQUESTS_PER_IP": 0,
            "DOWNLOAD_DELAY": 0,
            "RANDOMIZE_DOWNLOAD_DELAY": False,
            "AUTOTHROTTLE_ENABLED": False,
            "ROBOTSTXT_OBEY": False,
            "HTTPCACHE_ENABLED": False,
            "RETRY_ENABLED": False,
            "COOKIES_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            # Scrapy 2.8 warns at start-up unless the fingerprinter is named; 2.7 is the one it recommends.
            "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
            # No item is yielded, and none would be written anywhere.
            "FEEDS": {},
        }
    )
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, root_url=root)
    process.start()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "pages": crawler.spider.pages,
        "cpuMs": (usage.ru_utime + usage.ru_stime) * 1000,
        # Linux reports ru_maxrss in KiB.
        "peakRssBytes": usage.ru_maxrss * 1024,
    }))


if __name__ == "__main__":
    main()
