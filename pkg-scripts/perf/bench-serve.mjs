// `repute serve` as a child process, for the benchmarks that measure the server from outside
// (bench-viewers.mjs, bench-import.mjs): port 0, no tokens, on a temporary data folder seeded
// with a snapshot; under `node --cpu-prof` when given a folder for the profile (written when
// the server stops), with any other Node flags given (`--trace-gc`, say).

import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Starts the server on `snapshot` (text); resolves once it serves to `{ url, pid, stop() }`;
 * `stop()` sends SIGTERM, waits for the exit and removes the folder. `onOutput(text)` is given
 * what the server prints after that. */
export async function serveChild(snapshot, { cpuProf, nodeFlags = [], onOutput } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "repute-bench-"));
  await writeFile(path.join(dir, "snapshot.json"), snapshot);
  const profile = cpuProf ? ["--cpu-prof", "--cpu-prof-dir", cpuProf] : [];
  const child = spawn(process.execPath, [...profile, ...nodeFlags, path.join(HERE, "../bin/repute.js"), "serve", "--port", "0", "--data", dir], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, REPUTE_TOKENS: "" },
  });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const code = await new Promise((r) => child.once("exit", r));
      // A server that fails to stop (its final checkpoint out of heap, say) is a finding.
      if (code !== 0) console.error(`repute serve exited with code ${code} on SIGTERM`);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (d) => {
        if (onOutput && out === null) return onOutput(d);
        out += d;
        const m = /repute: serving (http:\/\/\S+)/.exec(out);
        if (m) {
          resolve(m[1]);
          if (onOutput) out = null;
        }
      });
      child.once("exit", () => reject(new Error(`repute serve exited:\n${out}`)));
    });
    return { url, pid: child.pid, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
