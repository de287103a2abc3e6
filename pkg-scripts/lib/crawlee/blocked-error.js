// `RequestBlockedError`: what repute/crawlee throws for an answer judged BLOCKED (a blocked
// status or a soft ban), after reporting it. It must be a `SessionError` of the crawler's own
// copy of Crawlee (crawler-classes.js) so that Crawlee rotates the session and retries the
// request, through another lease, without counting it against maxRequestRetries. The exported
// class extends our import's SessionError; for a crawler on another copy the same error is
// built on that copy's SessionError (one subclass per copy), and `instanceof
// RequestBlockedError` holds for both — it checks a brand, not the prototype chain. Messages
// are redacted (no proxy credentials).

import { SessionError } from "@crawlee/core";
import { redactSecrets } from "../call/errors.js";
import { crawleeClassesOf } from "./crawler-classes.js";

const BRAND = Symbol.for("repute.crawlee.RequestBlockedError");

function init(error, { status, resource, context }) {
  error.name = "RequestBlockedError";
  error.code = "BLOCKED";
  if (status !== undefined) error.status = status;
  error.resource = resource;
  error.context = context;
}

export class RequestBlockedError extends SessionError {
  static [Symbol.hasInstance](value) {
    return value !== null && typeof value === "object" && value[BRAND] === true;
  }

  constructor(message, fields) {
    super(redactSecrets(message));
    init(this, fields);
  }
}
Object.defineProperty(RequestBlockedError.prototype, BRAND, { value: true });

/** Another copy's SessionError → its RequestBlockedError class. */
const perCopy = new WeakMap();

/** A RequestBlockedError that the crawler `request` belongs to recognises as its SessionError. */
export function requestBlockedError(request, message, fields) {
  const { SessionError: Theirs } = crawleeClassesOf(request);
  if (Theirs === SessionError) return new RequestBlockedError(message, fields);
  let Blocked = perCopy.get(Theirs);
  if (!Blocked) {
    Blocked = class RequestBlockedError extends Theirs {
      constructor(text, f) {
        super(redactSecrets(text));
        init(this, f);
      }
    };
    Object.defineProperty(Blocked.prototype, BRAND, { value: true });
    perCopy.set(Theirs, Blocked);
  }
  return new Blocked(message, fields);
}
