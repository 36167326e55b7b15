/**
 * A test helper: listen to the crawl and loop channels the stage publishes
 * on, as any subscriber would, without the `trace` option's subscriber.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { crawlChannel, loopChannel, type CrawlMessage, type LoopMessage } from "../../src/observe/channels.js";

/**
 * Calls `onMessage` with each message published on the loop channel until
 * the returned function is called.
 */
export function onLoopMessage(onMessage: (message: LoopMessage) => void): () => void {
  function listener(message: unknown): void {
    onMessage(message as LoopMessage); // Only the stages publish on this channel.
  }
  diagnostics_channel.subscribe(loopChannel.name, listener);
  return function stopListening(): void {
    diagnostics_channel.unsubscribe(loopChannel.name, listener);
  };
}

/**
 * Calls `onMessage` with each message published on the crawl channel until
 * the returned function is called.
 */
export function onCrawlMessage(onMessage: (message: CrawlMessage) => void): () => void {
  function listener(message: unknown): void {
    onMessage(message as CrawlMessage); // Only the stages publish on this channel.
  }
  diagnostics_channel.subscribe(crawlChannel.name, listener);
  return function stopListening(): void {
    diagnostics_channel.unsubscribe(crawlChannel.name, listener);
  };
}
