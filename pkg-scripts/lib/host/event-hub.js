// `EventHub`: a host's in-process event consumers (the base of host-core.js): `subscribe`
// (synchronous, as events are drained), `on`/`addEventListener` (an EventTarget whose
// listeners are guarded: one that throws is reported to `onError`, never to the pool call nor
// as an uncaught exception) and `events()` (an async iterator: replay from the host's event log,
// then live, through a bounded queue; what a slow consumer loses is counted). The host decides
// which events and when (`_publish`); this only hands them out.

export class EventHub extends EventTarget {
  #subscribers = new Set();
  /** Wakes waiting `events()` iterators (on close). */
  #wakers = new Set();
  /** The listener wrappers `addEventListener` registered, by listener. */
  #wrapped = new WeakMap();
  #onError = () => {};
  #deliveryDropped = 0;
  #closed = false;

  /** Where a consumer's failure is reported. */
  _useOnError(onError) {
    this.#onError = onError;
  }

  /** Hands `events` (in seq order) to subscribers, then to listeners of their type and "event". */
  _publish(events) {
    for (const e of events) {
      for (const s of this.#subscribers) {
        try {
          s(e);
        } catch (error) {
          this.#onError(error);
        }
      }
      this.dispatchEvent(new CustomEvent(e.type, { detail: e }));
      this.dispatchEvent(new CustomEvent("event", { detail: e }));
    }
  }

  /** EventTarget, with listeners guarded: one that throws is reported to `onError` (Node's
   * EventTarget would turn it into an uncaught exception and end the process). */
  addEventListener(type, listener, options) {
    if (listener === null || listener === undefined) return;
    let wrapper = this.#wrapped.get(listener);
    if (!wrapper) {
      wrapper = (ev) => {
        try {
          if (typeof listener === "function") listener.call(this, ev);
          else listener.handleEvent(ev);
        } catch (error) {
          this.#onError(error);
        }
      };
      this.#wrapped.set(listener, wrapper);
    }
    super.addEventListener(type, wrapper, options);
  }

  removeEventListener(type, listener, options) {
    super.removeEventListener(type, this.#wrapped.get(listener) ?? listener, options);
  }

  /** Calls `cb(event)` for events of `type` (`"event"` for all); returns a disposer. A
   * throwing callback is reported to `onError` and does not affect the pool. */
  on(type, cb) {
    const listener = (ev) => cb(ev.detail);
    this.addEventListener(type, listener);
    return () => this.removeEventListener(type, listener);
  }

  /** Live events, synchronously, as they are drained; returns the unsubscribe function. */
  subscribe(listener) {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }

  /**
   * Events as an async iterator (`eventStream` below). `after`: replay from the event log first
   * (events with a larger seq), then live. At most `queue` undelivered events are kept; a
   * consumer that falls further behind loses the oldest (counted in `stats().deliveryDropped`).
   */
  events({ signal, after = null, queue = 10000 } = {}) {
    return eventStream(this, {
      signal,
      after,
      queue,
      dropped: () => this.#deliveryDropped++,
      wakers: this.#wakers,
      closed: () => this.#closed,
    });
  }

  /** Events lost by slow `events()` consumers. */
  get _deliveryDropped() {
    return this.#deliveryDropped;
  }

  /** Lets go of every consumer: subscribers dropped, waiting iterators end. */
  _stopEvents() {
    this.#closed = true;
    this.#subscribers.clear();
    for (const wake of this.#wakers) wake();
  }

  get _closed() {
    return this.#closed;
  }
}

/**
 * `host`: its `subscribe` and `readEvents`. `dropped()`: called for each event lost; `wakers`:
 * the host's set of functions it calls on close; `closed()`: whether it is closed.
 */
function eventStream(host, { signal, after = null, queue = 10000, dropped, wakers, closed }) {
  return {
    async *[Symbol.asyncIterator]() {
      const buffer = [];
      let wake = null;
      let last = after ?? 0;
      const unsubscribe = host.subscribe((e) => {
        buffer.push(e);
        if (buffer.length > queue) {
          buffer.shift();
          dropped();
        }
        wake?.();
      });
      const onAbort = () => wake?.();
      signal?.addEventListener("abort", onAbort);
      wakers.add(onAbort);
      try {
        if (after !== null) {
          for (;;) {
            const page = await host.readEvents({ after: last, limit: 1000 });
            for (const e of page.events) {
              last = e.seq;
              yield e;
            }
            if (page.next === null) break;
          }
        }
        while (!signal?.aborted && !closed()) {
          if (buffer.length === 0) {
            await new Promise((r) => {
              wake = r;
            });
            wake = null;
            continue;
          }
          const e = buffer.shift();
          if (e.seq > last) {
            last = e.seq;
            yield e;
          }
        }
      } finally {
        unsubscribe();
        signal?.removeEventListener("abort", onAbort);
        wakers.delete(onAbort);
      }
    },
  };
}
