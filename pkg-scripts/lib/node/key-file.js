// A secret key kept in a pool's data folder: `<dir>/<name>`, 32 random bytes, readable by the
// owner only (mode 0600). The resource-id key lives here (`resource-id.js`), so that ids stay
// the same across restarts of one folder and differ between folders.
//
// Made the way the lease-id key is (`crypto.getRandomValues`, in `lease-id.js`), then stored:
// written to a temporary file created 0600, fsynced, renamed into place and the folder
// fsynced, so a crash leaves either no key or the whole key (and no id was made from a key that
// is not on disk). A key file found readable by others is narrowed to 0600. A file of the wrong
// size is an error naming the file, never quoting it. The caller holds the folder's lock.

import { open, readFile, rename, chmod, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { fsyncDir } from "./fsync.js";

const KEY_BYTES = 32;

/** The key in `<dir>/<name>`, made and stored first when there is none. */
export async function loadKey(dir, name) {
  const file = path.join(dir, name);
  let bytes;
  try {
    bytes = await readFile(file);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    return await makeKey(file);
  }
  if (bytes.length !== KEY_BYTES) {
    throw Object.assign(
      new Error(`${file} is not a key (${bytes.length} bytes, expected ${KEY_BYTES}); restore it from a backup of the folder, or delete it to make a new one (ids made before will no longer resolve)`),
      { code: "KEY_DAMAGED", file },
    );
  }
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

async function makeKey(file) {
  const key = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  const tmp = `${file}.tmp-${process.pid}`;
  await unlink(tmp).catch(() => {}); // left by a crash: it may not be 0600
  const fh = await open(tmp, "wx", 0o600);
  try {
    await fh.writeFile(key);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await unlink(tmp).catch(() => {});
    throw e;
  }
  await fh.close();
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
  return key;
}
