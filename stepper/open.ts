/**
 * `npm run stepper`: opens dist/stepper/index.html in the desktop's browser,
 * building it first if it is missing. Where there is no `xdg-open` (a
 * server, a container), it prints the file:// URL to open instead.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PAGE = join(ROOT, "dist", "stepper", "index.html");

if (!existsSync(PAGE)) {
  console.log("stepper: dist/stepper/index.html is missing; building it (npx tsx stepper/build.ts)");
  const built = spawnSync(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "stepper", "build.ts")], { stdio: "inherit" });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const url = pathToFileURL(PAGE).href;
const opener = spawnSync("sh", ["-c", "command -v xdg-open"], { encoding: "utf8" });
if (opener.status === 0 && (process.env["DISPLAY"] ?? process.env["WAYLAND_DISPLAY"]) !== undefined) {
  spawn("xdg-open", [url], { stdio: "ignore", detached: true }).unref();
  console.log(`stepper: opened ${url}`);
} else {
  console.log(`stepper: open this in a browser: ${url}`);
}
