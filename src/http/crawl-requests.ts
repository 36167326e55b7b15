/**
 * The requests of one raw-socket crawl (stages 1 and 2): the crawl's options
 * for each job's request, and the connections it keeps.
 *
 * @module
 */
import { withCookies, type CookieJarLike } from "../crawl/cookies.js";
import type { ConnectOptions, Network } from "../kernel/socket.js";
import { IdleConnections } from "./idle-connections.js";
import type { Proxies } from "./proxy.js";
import { ProxyNetwork } from "./proxy-network.js";

/**
 * What a raw-socket request needs besides the connection's options (stage
 * 2's `request()`): the crawl's `userAgent`, `headers` and `maxBodyBytes`,
 * whether to leave the bodies no link is read from unread (`skipNonHtml`;
 * absent: read every body), and its kept connections.
 */
export type RequestOptions = ConnectOptions & {
  userAgent: string;
  maxBodyBytes: number;
  headers?: Readonly<Record<string, string>>;
  skipNonHtml?: boolean;
  /** The crawl's kept connections: take one to the origin if it waits, keep this one if the response allows. */
  connections?: IdleConnections | null;
  /** The crawl's proxies (`formatGetRequest` writes an `http:` request to one in absolute-form); null or absent: none. */
  proxy?: Proxies | null;
};

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** What {@link CrawlRequests} reads of a crawl's options: its `headers`, and its cookie jar (null or absent: none). */
export interface RequestHeaderOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly cookies?: CookieJarLike | null;
}

/** What a crawl's options say of how to connect: its network, its TLS checks, and its proxies. */
interface ConnectingOptions {
  readonly network?: Network | null;
  readonly ca?: string | Buffer | null;
  readonly rejectUnauthorized?: boolean;
  readonly proxy?: Proxies | null;
}

/** The options of one request: the crawl's (`O`), with its kept connections. */
export type CrawlRequestOptions<O extends object> = O & { readonly connections: IdleConnections };

/**
 * What every request of one crawl is sent with, by a stage that reads its
 * own sockets: the crawl's options (`O`, its resolved options) and its kept
 * connections ({@link IdleConnections}), for a page (with `skipNonHtml`, a
 * body no link is read from is left unread) or, for a `robots.txt` or a
 * sitemap, read whole; when the crawl keeps cookies, with the jar's `Cookie`
 * header for the job's URL (src/crawl/cookies.ts). `close()` closes the kept
 * connections when the crawl ends.
 *
 * With a `proxy`, the options' `network` is a {@link ProxyNetwork} over the
 * crawl's own: every socket the stage opens goes where the proxies say, and
 * `formatGetRequest` writes each request for it.
 *
 * @remarks Kept out of the crawlers so that they show only how they wait:
 * stage 1's Fetcher and stage 2's `request()` take these options as they are.
 */
export class CrawlRequests<O extends RequestHeaderOptions & ConnectingOptions> {
  /** Connections kept open for the next request to their origin. */
  readonly connections = new IdleConnections();
  private readonly page: CrawlRequestOptions<O>;
  private readonly whole: CrawlRequestOptions<O>;

  constructor(options: O) {
    const proxy = options.proxy ?? null;
    const network = proxy === null ? {} : { network: new ProxyNetwork(proxy, options.network ?? null, { ca: options.ca ?? null, rejectUnauthorized: options.rejectUnauthorized ?? true }) };
    this.page = { ...options, ...network, connections: this.connections };
    this.whole = { ...this.page, skipNonHtml: false };
  }

  /**
   * The options for a job's next attempt: a page's, or (a `robots.txt`, a
   * sitemap) read whole; with cookies for `job.url`, if the jar has any
   * (a new object then, made for this attempt; else the same one each time).
   */
  optionsFor(job: { readonly kind: string; readonly url?: string }): CrawlRequestOptions<O> {
    const options = job.kind === "page" ? this.page : this.whole;
    const jar = options.cookies ?? null;
    if (jar === null || job.url === undefined) return options;
    const given = options.headers ?? NO_HEADERS;
    const headers = withCookies(given, jar, job.url);
    return headers === given ? options : { ...options, headers };
  }

  /** Closes the kept connections; a connection kept later is closed at once. */
  close(): void {
    this.connections.close();
  }
}
