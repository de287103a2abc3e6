// A host's events as an async iterator (`host.events()`, host-core.js): replayed from the event
// log after a seq first, then live, through a bounded queue. A consumer that falls more than
// `queue` events behind loses the oldest (the host counts them: `stats().deliveryDropped`); it
// never blocks or fails a pool call. Ends when `signal` aborts or the host closes.

/**
 * `host`: its `subscribe` and `readEvents`. `dropped()`: called for each event lost; `wakers`:
 * the host's set of functions it calls on close; `closed()`: whether it is closed.
 */
export function eventStream(host, { signal, after = null, queue = 10000, dropped, wakers, closed }) {
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
