// The single-owner lock of a pool folder (pkg-scripts/lib/node/lock.js): exclusive within and
// across processes, a POOL_LOCKED error that names the folder, pid, host and start time, a stale
// lock (owner killed with SIGKILL, a reused pid, a reboot) taken over — by exactly one of several
// racing processes —, an empty lock (a crash between its create and its write) taken over once it
// has stayed empty for a second, never a lock from another host or an unreadable one, and a
// release that removes only our own lock. Child processes are real `node` processes; nothing waits on a timer
// except for a child's own output.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { acquireLock } from "../../pkg-scripts/lib/node/lock.js";

const LOCK_URL = new URL("../../pkg-scripts/lib/node/lock.js", import.meta.url).href;
const root = await mkdtemp(path.join(os.tmpdir(), "repute-lock-"));
after(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(root, `pool-${++dirs}`);

/** A pid that certainly belonged to a process that has exited. */
function deadPid() {
  const r = spawnSync(process.execPath, ["-e", ""]);
  assert.equal(r.status, 0);
  return r.pid;
}

/**
 * A child `node` that tries to take the lock of `dir`, prints "ok <pid>" or the error code, and
 * keeps running (holding the lock, if it got it) until its stdin closes.
 */
function lockingChild(dir) {
  const code = `
    import { acquireLock } from ${JSON.stringify(LOCK_URL)};
    try { await acquireLock(process.env.POOL_DIR); console.log("ok " + process.pid); }
    catch (e) { console.log(e.code ?? e.message); }
    process.stdin.resume();
    process.stdin.on("end", () => process.exit(0));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    env: { ...process.env, POOL_DIR: dir },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.on("exit", (c, s) => reject(new Error(`child exited (${c ?? s}) before answering: ${out}`)));
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return { child, line, exited };
}

const readLock = async (dir) => JSON.parse(await readFile(path.join(dir, "LOCK"), "utf8"));

test("the lock file holds pid, host and start time; a second acquire in this process fails", async () => {
  const dir = newDir();
  const lock = await acquireLock(dir); // creates the folder
  const content = await readLock(dir);
  assert.equal(content.pid, process.pid);
  assert.equal(content.host, os.hostname());
  assert.ok(!Number.isNaN(Date.parse(content.startedAt)) && content.startedAt.endsWith("Z"));
  assert.deepEqual(lock.holder, content);

  await assert.rejects(acquireLock(dir), (e) => {
    assert.equal(e.code, "POOL_LOCKED");
    assert.ok(e instanceof Error);
    assert.equal(e.dir, path.resolve(dir));
    assert.deepEqual(e.holder, content);
    for (const part of [path.resolve(dir), `pid ${process.pid}`, `host ${os.hostname()}`, content.startedAt]) {
      assert.ok(e.message.includes(part), `${e.message} names ${part}`);
    }
    assert.match(e.message, /this process already holds it/);
    return true;
  });
  assert.deepEqual(await readLock(dir), content, "a failed acquire changes nothing");
  await lock.release();
  assert.equal(existsSync(path.join(dir, "LOCK")), false);
  await lock.release(); // idempotent
  const again = await acquireLock(dir);
  await again.release();
});

test("a live process's lock is refused; after it is killed with SIGKILL, its stale lock is taken over", async () => {
  const dir = newDir();
  const { child, line, exited } = lockingChild(dir);
  try {
    assert.equal(await line, `ok ${child.pid}`);
    await assert.rejects(acquireLock(dir), (e) => {
      assert.equal(e.code, "POOL_LOCKED");
      assert.equal(e.holder.pid, child.pid);
      assert.ok(e.message.includes(`pid ${child.pid} on host ${os.hostname()}`), e.message);
      assert.match(e.message, /still running/);
      return true;
    });
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
  const stale = await readLock(dir);
  assert.equal(stale.pid, child.pid, "kill -9 left the lock behind");

  const lock = await acquireLock(dir);
  const now = await readLock(dir);
  assert.equal(now.pid, process.pid);
  assert.notEqual(now.startedAt, undefined);
  assert.deepEqual(lock.holder, now);
  assert.deepEqual(readdirSync(dir), ["LOCK"], "no temporary or takeover file is left");
  await lock.release();
});

test("of several processes racing for one stale lock, exactly one gets it", async () => {
  const dir = newDir();
  await mkdir(dir);
  const stale = { pid: deadPid(), host: os.hostname(), startedAt: new Date(0).toISOString() };
  await writeFile(path.join(dir, "LOCK"), JSON.stringify(stale));

  const children = Array.from({ length: 4 }, () => lockingChild(dir));
  try {
    const answers = await Promise.all(children.map((c) => c.line));
    const winners = answers.filter((a) => a.startsWith("ok "));
    assert.equal(winners.length, 1, `answers: ${answers.join(", ")}`);
    assert.deepEqual(answers.filter((a) => !a.startsWith("ok ")), ["POOL_LOCKED", "POOL_LOCKED", "POOL_LOCKED"]);
    assert.equal((await readLock(dir)).pid, Number(winners[0].slice(3)));
  } finally {
    for (const c of children) c.child.kill("SIGKILL");
    await Promise.all(children.map((c) => c.exited));
  }
});

test("a lock from another host is never taken over, even if its pid is dead here", async () => {
  const dir = newDir();
  await mkdir(dir);
  const foreign = { pid: deadPid(), host: `${os.hostname()}-other`, startedAt: "2024-05-01T10:00:00.000Z" };
  const text = JSON.stringify(foreign);
  await writeFile(path.join(dir, "LOCK"), text);
  await assert.rejects(acquireLock(dir), (e) => {
    assert.equal(e.code, "POOL_LOCKED");
    for (const part of [`pid ${foreign.pid}`, `host ${foreign.host}`, foreign.startedAt, "another host"]) {
      assert.ok(e.message.includes(part), `${e.message} names ${part}`);
    }
    return true;
  });
  assert.equal(readFileSync(path.join(dir, "LOCK"), "utf8"), text);
});

test("a garbled lock file is refused with a message saying how to clear it", async () => {
  for (const [text, why] of [
    ['{"pid":12', /is not valid JSON/],
    ['{"pid":0,"host":"h","startedAt":"x"}', /does not name a pid/],
  ]) {
    const dir = newDir();
    await mkdir(dir);
    const file = path.join(dir, "LOCK");
    await writeFile(file, text);
    await assert.rejects(acquireLock(dir), (e) => {
      assert.equal(e.code, "POOL_LOCKED");
      assert.equal(e.holder, null);
      assert.match(e.message, why);
      assert.ok(e.message.includes(`remove ${file}`), e.message);
      return true;
    });
    assert.equal(readFileSync(file, "utf8"), text, "left as it was");
  }
});

test("an empty lock file (a crash between create and write) is taken over: at once when old, after a second when new", async () => {
  for (const age of ["old", "new"]) {
    const dir = newDir();
    await mkdir(dir);
    const file = path.join(dir, "LOCK");
    await writeFile(file, "");
    if (age === "old") await utimes(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const lock = await acquireLock(dir);
    assert.deepEqual(await readLock(dir), lock.holder, `${age}: the lock is ours`);
    assert.equal(lock.holder.pid, process.pid);
    await lock.release();
    assert.equal(existsSync(file), false, `${age}: released`);
  }
});

test("an empty lock file that its creator fills while we wait is judged by what it holds", async () => {
  const dir = newDir();
  await mkdir(dir);
  const file = path.join(dir, "LOCK");
  await writeFile(file, ""); // just created: a creator is about to write it
  const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  try {
    const attempt = acquireLock(dir);
    // real time: acquireLock reads the file on the real clock; 50 ms is well inside the second
    // an empty lock is given, so the attempt sees it empty first.
    await new Promise((r) => setTimeout(r, 50));
    const live = { pid: holder.pid, host: os.hostname(), startedAt: new Date().toISOString() };
    await writeFile(file, JSON.stringify(live));
    await assert.rejects(attempt, (e) => {
      assert.equal(e.code, "POOL_LOCKED");
      assert.equal(e.holder.pid, holder.pid);
      assert.match(e.message, /still running/);
      return true;
    });
    assert.deepEqual(await readLock(dir), live, "left to its holder");
  } finally {
    holder.kill("SIGKILL");
  }
});

test("release removes the lock only while it is still ours", async () => {
  const dir = newDir();
  const lock = await acquireLock(dir);
  const file = path.join(dir, "LOCK");
  // Someone else's lock now sits there (e.g. an operator removed ours and another host took it).
  const other = JSON.stringify({ pid: 1, host: "elsewhere", startedAt: "2024-01-01T00:00:00.000Z" });
  await writeFile(file, other);
  await lock.release();
  assert.equal(readFileSync(file, "utf8"), other, "another holder's lock is left alone");
  await rm(file);
  await lock.release(); // nothing there: fine
});

const linux = existsSync("/proc/sys/kernel/random/boot_id") && existsSync(`/proc/${process.pid}/stat`);

test("Linux: a lock whose pid now belongs to another process, or from before a reboot, is stale", { skip: !linux }, async () => {
  const ours = await acquireLock(newDir());
  const me = ours.holder;
  await ours.release();
  assert.equal(typeof me.bootId, "string");
  assert.ok(Number.isSafeInteger(me.procStart));

  // Same pid (alive: it is us), but started at another time: a restarted container's pid 1.
  const reused = { ...me, procStart: me.procStart - 1, startedAt: "2024-01-01T00:00:00.000Z" };
  // A pid that is alive (us), recorded during another boot.
  const rebooted = { ...me, bootId: "00000000-0000-0000-0000-000000000000" };
  for (const stale of [reused, rebooted]) {
    const dir = newDir();
    await mkdir(dir);
    await writeFile(path.join(dir, "LOCK"), JSON.stringify(stale));
    const lock = await acquireLock(dir);
    assert.equal((await readLock(dir)).startedAt, lock.holder.startedAt);
    await lock.release();
  }
});
