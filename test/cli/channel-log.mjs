/**
 * Preloaded with `node --import` by untraced-crawl.test.ts: appends to the
 * file named by CHANNEL_LOG the name of every diagnostics channel something
 * subscribes to, as it subscribes, through `node:diagnostics_channel`'s
 * `subscribe` (what the crawler's trace and undici's own debug log call) or
 * a channel's own.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { appendFileSync } from "node:fs";

const log = process.env.CHANNEL_LOG;
if (log === undefined) throw new Error("channel-log.mjs: set CHANNEL_LOG to the file to write");
const subscribe = diagnostics_channel.subscribe;
diagnostics_channel.subscribe = function loggedSubscribe(name, onMessage) {
  appendFileSync(log, `${String(name)}\n`);
  return subscribe.call(this, name, onMessage);
};
const Channel = Object.getPrototypeOf(diagnostics_channel.channel("channel-log:probe"));
const subscribeChannel = Channel.subscribe;
Channel.subscribe = function loggedChannelSubscribe(onMessage) {
  appendFileSync(log, `${String(this.name)}\n`);
  return subscribeChannel.call(this, onMessage);
};
