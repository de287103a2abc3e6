// A turn of the event loop, for work done in steps (a large dashboard, a scan for an id) so
// that requests waiting meanwhile — their I/O included — are served between steps. Node has
// setImmediate; elsewhere (workerd without it) a zero timeout does the same.

/** Resolves after the event loop has served what was waiting. */
export const nextTurn = typeof setImmediate === "function" ? () => new Promise((r) => setImmediate(r)) : () => new Promise((r) => setTimeout(r, 0));
