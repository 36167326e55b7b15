/**
 * `npm run stepper`: opens dist/stepper/index.html in the desktop's browser,
 * building it first if it is missing. Where there is no `xdg-open` (a
 * server, a container) or no display, it prints the file:// URL to open
 * instead. `npm run learn -- N --step` opens the learner's page with
 * {@link openPage} the same way.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PAGE = join(ROOT, "dist", "stepper", "index.html");

/**
 * Opens `file` in the desktop's browser with `xdg-open` when there is one and
 * a display (`DISPLAY` or `WAYLAND_DISPLAY`); else prints its file:// URL.
 * Returns whether it opened it.
 */
export function openPage(file: string): boolean {
  const url = pathToFileURL(file).href;
  const opener = spawnSync("sh", ["-c", "command -v xdg-open"], { encoding: "utf8" });
  if (opener.status === 0 && (process.env["DISPLAY"] || process.env["WAYLAND_DISPLAY"])) {
    spawn("xdg-open", [url], { stdio: "ignore", detached: true }).unref();
    console.log(`stepper: opened ${url}`);
    return true;
  }
  console.log(`stepper: open this in a browser: ${url}`);
  return false;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(PAGE)) {
    console.log("stepper: dist/stepper/index.html is missing; building it (npx tsx stepper/build.ts)");
    const built = spawnSync(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "stepper", "build.ts")], { stdio: "inherit" });
    if (built.status !== 0) process.exit(built.status ?? 1);
  }
  openPage(PAGE);
}
