// Making a directory's entries durable: after a create or rename, fsync the folder itself, or a
// power cut can lose the new name even though the file's data was synced.

import { open } from "node:fs/promises";
import { openSync, fsyncSync, closeSync } from "node:fs";

// Windows cannot open a directory, and some file systems refuse to fsync one.
const UNSUPPORTED = ["EISDIR", "EPERM", "EINVAL", "ENOTSUP", "EOPNOTSUPP", "EACCES"];

export async function fsyncDir(dir) {
  let fh;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch (e) {
    if (!UNSUPPORTED.includes(e.code)) throw e;
  } finally {
    await fh?.close();
  }
}

/** The same, synchronously (for the rare writes that must finish before a call returns). */
export function fsyncDirSync(dir) {
  let fd;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (e) {
    if (!UNSUPPORTED.includes(e.code)) throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
