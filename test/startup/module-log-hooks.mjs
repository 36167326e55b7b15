/** The loader hook module-log.mjs registers: appends each ES module's URL to MODULE_LOG as it loads. */
import { appendFileSync } from "node:fs";

const log = process.env.MODULE_LOG;

export async function load(url, context, nextLoad) {
  if (log !== undefined) appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
