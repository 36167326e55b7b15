/**
 * Debian's tinyproxy (https://tinyproxy.github.io), a real forward proxy,
 * started in the foreground on a free loopback port with a config file of
 * its own, for the tests that check the crawlers against a proxy someone
 * else wrote. Its log (level Connect, on stderr) says each request and
 * `CONNECT` it took, which {@link Tinyproxy.requests} reads.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where tinyproxy is installed, or null (then the tests that need it are skipped, saying why). */
export const TINYPROXY: string | null = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v tinyproxy"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
})();

/** A running tinyproxy. */
export interface Tinyproxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** The request lines it logged, in order: `GET http://host/path HTTP/1.1`, `CONNECT host:port HTTP/1.1`. */
  requests(): string[];
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, as the system hands one out. */
function freePort(): Promise<number> {
  return new Promise(function find(resolve, reject) {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", function listening() {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(function closed() { resolve(port); });
    });
  });
}

/** Whether something accepts a connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise(function tryPort(resolve) {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", function up() {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", function down() {
      resolve(false);
    });
  });
}

/**
 * Starts tinyproxy on 127.0.0.1, accepting only loopback clients, with no
 * `ConnectPort` line (so `CONNECT` may reach any port: the test sites listen
 * on ephemeral ones) and, with `auth` (`user:password`), Basic credentials
 * required. Resolves once it accepts connections.
 */
export async function startTinyproxy(auth?: string): Promise<Tinyproxy> {
  if (TINYPROXY === null) throw new Error("tinyproxy is not installed: apt-get install tinyproxy");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "tinyproxy-"));
  const config = join(dir, "tinyproxy.conf");
  const [user, password] = auth === undefined ? [] : auth.split(":");
  writeFileSync(config, [
    `Port ${port}`,
    "Listen 127.0.0.1",
    "Allow 127.0.0.1",
    "Timeout 30",
    "MaxClients 64",
    "LogLevel Connect",
    "DisableViaHeader Yes",
    ...(auth === undefined ? [] : [`BasicAuth ${user} ${password}`]),
    "",
  ].join("\n"));
  const child: ChildProcess = spawn(TINYPROXY, ["-d", "-c", config], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  let exited: number | null | undefined;
  function read(chunk: Buffer): void {
    log += chunk.toString("utf8");
  }
  child.stdout?.on("data", read);
  child.stderr?.on("data", read);
  child.once("exit", function ended(code) { exited = code; });
  // Its "Accepting connections" is logged at level Info, below Connect: try the port until it answers (at most 250 tries).
  for (let tries = 0; !(await accepts(port)); tries += 1) {
    if (exited !== undefined || tries >= 250) {
      child.kill("SIGKILL");
      throw new Error(`tinyproxy did not start (exit ${String(exited)}):\n${log}`);
    }
    await new Promise(function later(resolve) { setTimeout(resolve, 20); });
  }
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests() {
      return [...log.matchAll(/Request \(file descriptor \d+\): (.+)$/gm)].map((match) => match[1].trim());
    },
    close() {
      // Once its output is closed, every line it logged has been read: requests() is whole.
      closing ??= new Promise<void>(function stopped(resolve) {
        child.once("close", function stoppedNow() {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill("SIGTERM");
      });
      return closing;
    },
  };
}
