// Reading the audit log's files (audit-log.js): finding a page of events by seq across the
// files (a binary search over file names, then over byte offsets within a file, then reading
// forward), and repairing a file whose last line a crash cut. The files' layout is described in
// audit-log.js; this module only reads them, and truncates a cut tail.

import { open } from "node:fs/promises";
import { Buffer } from "node:buffer";

const CHUNK = 64 * 1024;
const SEARCH_CHUNK = 4 * 1024;
/** A crash-cut last line longer than this is not even tried as JSON: it is cut off. */
const MAX_TAIL_REPAIR = 1 << 20;

/** Index of the first of arr[0..len) with seq > after (arr is in seq order). */
export function lowerBound(arr, len, after) {
  let lo = 0;
  let hi = len;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid].seq > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Collects into `out` (up to `need`) events on disk with after < seq < cutoff. */
export async function readFiles(files, after, cutoff, need, out) {
  // The file that holds after + 1 is the last one whose first seq is <= after + 1.
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (files[mid].firstSeq <= after + 1) lo = mid + 1;
    else hi = mid;
  }
  for (let i = Math.max(0, lo - 1); i < files.length && out.length < need; i++) {
    let fh;
    try {
      fh = await open(files[i].path, "r");
    } catch (e) {
      if (e.code === "ENOENT") continue; // removed by retention meanwhile
      throw e;
    }
    try {
      const size = (await fh.stat()).size;
      const start = files[i].firstSeq <= after ? await searchOffset(fh, size, after) : 0;
      let stop = false;
      await scanLines(fh, start, CHUNK, (ev) => {
        if (ev.seq >= cutoff) {
          stop = true;
          return false;
        }
        if (ev.seq > after) out.push(ev);
        return out.length < need;
      });
      if (stop) return;
    } finally {
      await fh.close();
    }
  }
}

/**
 * Smallest byte offset p such that the first event line starting at or after p has seq > after
 * (the file's size when there is none). Lines are in seq order, so this is a binary search.
 */
async function searchOffset(fh, size, after) {
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    let seq = Infinity;
    await scanLines(fh, mid, SEARCH_CHUNK, (ev) => {
      seq = ev.seq;
      return false;
    });
    if (seq > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Calls `visit` with each event of the complete lines that start at or after byte `from`, in
 * order, until it returns false. Lines that are not an event object are skipped; a last line
 * without its newline (a write in progress, or cut by a crash) is not a line yet.
 */
async function scanLines(fh, from, chunkSize, visit) {
  // Start one byte early: if that byte is "\n", `from` is a line start; otherwise we are inside
  // a line, whose rest is skipped.
  let pos = from > 0 ? from - 1 : 0;
  let skip = from > 0;
  const buf = Buffer.allocUnsafe(chunkSize);
  let carry = null;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, chunkSize, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    const data = carry ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
    let start = 0;
    for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
      if (skip) {
        skip = false;
      } else {
        const ev = parseEvent(data.toString("utf8", start, nl));
        if (ev !== null && visit(ev) === false) return;
      }
      start = nl + 1;
    }
    // Keep the start of an unfinished line for the next read (not one that is being skipped).
    carry = start < data.length && !skip ? Buffer.from(data.subarray(start)) : null;
  }
}

function parseEvent(line) {
  if (line.length === 0) return null;
  try {
    const ev = JSON.parse(line);
    return ev !== null && typeof ev === "object" && Number.isSafeInteger(ev.seq) ? ev : null;
  } catch {
    return null;
  }
}

/**
 * Makes the last file end on a complete line (after a crash it may not): a final fragment is cut
 * off, unless it is a whole event missing only its newline. Returns the file's size and the seq of
 * its last event (null when it has none).
 */
export async function repairTail(file) {
  const fh = await open(file, "r+");
  try {
    let size = (await fh.stat()).size;
    const end = await endOfLastLine(fh, size);
    if (end < size) {
      let whole = false;
      if (size - end <= MAX_TAIL_REPAIR) {
        const tail = Buffer.alloc(size - end);
        await readFully(fh, tail, end);
        whole = parseEvent(tail.toString("utf8")) !== null;
      }
      if (whole) {
        await fh.write("\n", size);
        size += 1;
      } else {
        await fh.truncate(end);
        size = end;
      }
      await fh.sync();
    }
    return { size, lastSeq: await lastSeqBefore(fh, size) };
  } finally {
    await fh.close();
  }
}

/** Offset just after the last "\n" before `size` (0 when there is none). */
async function endOfLastLine(fh, size) {
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let pos = size; pos > 0; ) {
    const n = Math.min(CHUNK, pos);
    pos -= n;
    await readFully(fh, buf.subarray(0, n), pos);
    const i = buf.subarray(0, n).lastIndexOf(0x0a);
    if (i >= 0) return pos + i + 1;
  }
  return 0;
}

/** Seq of the last event line that ends at or before `end` (a line end), reading backwards. */
async function lastSeqBefore(fh, end) {
  let pos = end;
  let carry = null; // bytes from a line start's neighbourhood to the line end, ending with "\n"
  while (pos > 0) {
    const n = Math.min(CHUNK, pos);
    pos -= n;
    const chunk = Buffer.allocUnsafe(n);
    await readFully(fh, chunk, pos);
    const data = carry ? Buffer.concat([chunk, carry]) : chunk;
    let hi = data.length - 1; // the "\n" ending the line being looked at
    for (;;) {
      const nl = hi > 0 ? data.lastIndexOf(0x0a, hi - 1) : -1;
      if (nl < 0 && pos > 0) break; // the line may start in an earlier chunk
      const ev = parseEvent(data.toString("utf8", nl + 1, hi));
      if (ev !== null) return ev.seq;
      if (nl < 0) return null;
      hi = nl;
    }
    carry = Buffer.from(data.subarray(0, hi + 1));
  }
  return null;
}

async function readFully(fh, buf, position) {
  for (let off = 0; off < buf.length; ) {
    const { bytesRead } = await fh.read(buf, off, buf.length - off, position + off);
    if (bytesRead === 0) throw new Error("audit log file shrank while being read");
    off += bytesRead;
  }
}
