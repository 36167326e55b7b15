/**
 * Debian's Chromium, driven by playwright-core, for the tests that look at a
 * page as a browser draws it (the timeline, the primer's diagrams). Without
 * it those tests skip, saying so: `.ci/run` installs it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Where Debian's package puts the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** Whether Chromium is installed; when not, warns once that `testFile`'s browser tests are skipped. */
export function hasChromium(testFile: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found) console.warn(`SKIPPED ${testFile}: ${CHROMIUM} is absent (apt-get install chromium; .ci/run does)`);
  return found;
}

/** A headless Chromium with its profile in `directory`, no network of its own, and a window of `width` × `height`. */
export function launchChromium(directory: string, width: number, height: number): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(directory, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width, height },
  });
}
