// Crawlee's error classes as the crawler at hand knows them. Crawlee decides what to do with an
// error by `instanceof` of its own copy of @crawlee/core (`SessionError`: rotate the session and
// retry beyond maxRequestRetries; `CriticalError`: stop the crawl). A symlinked or workspace
// install can load two copies — the crawler's and the one repute/crawlee imports — and an error
// built from ours is then, to the crawler, a plain Error. So the classes are taken from the copy
// the crawler's own `Request` objects come from: the loaded @crawlee/core (or a package that
// re-exports it) whose `Request` the request is an instance of, found once per Request class in
// Node's module cache (Crawlee 3 is CommonJS, its ESM entries load the CommonJS files). Our own
// import answers when the request is one of ours or no loaded copy claims it. Owns that lookup;
// what the errors say is their throwers' (blocked-error.js, crawler-binding.js, …).

import { createRequire } from "node:module";
import * as own from "@crawlee/core";

const require = createRequire(import.meta.url);

const OWN = Object.freeze({ SessionError: own.SessionError, CriticalError: own.CriticalError, Request: own.Request });

/** Request class → the classes of its copy. */
const byRequestClass = new WeakMap();

/** `{ SessionError, CriticalError, Request }` of the @crawlee/core copy `request` comes from
 * (our own import when it cannot be told). */
export function crawleeClassesOf(request) {
  const Request = request?.constructor;
  if (typeof Request !== "function" || request instanceof own.Request) return OWN;
  let found = byRequestClass.get(Request);
  if (found === undefined) {
    found = loadedCopyOf(request) ?? OWN;
    byRequestClass.set(Request, found);
  }
  return found;
}

function loadedCopyOf(request) {
  for (const m of Object.values(require.cache)) {
    const x = m?.exports;
    if (x === null || typeof x !== "object") continue;
    if (typeof x.Request !== "function" || typeof x.SessionError !== "function" || typeof x.CriticalError !== "function") continue;
    if (request instanceof x.Request) return Object.freeze({ SessionError: x.SessionError, CriticalError: x.CriticalError, Request: x.Request });
  }
  return null;
}

/** An error of class `kind` ("SessionError" or "CriticalError") as the crawler `request` belongs
 * to knows it (no request: our own import's). */
export function crawlerError(request, kind, message) {
  const Class = (request === undefined ? OWN : crawleeClassesOf(request))[kind];
  return new Class(message);
}
