// A binary min-heap of timed items `{ t, … }`, ties broken by insertion order: the event queue
// of a simulation run and of a replay's pending candidate actions.

/** A binary min-heap of `{ t, order }` items (ties broken by `order`: insertion order). */
export class Queue {
  items = [];
  #order = 0;
  push(item) {
    item.order = this.#order++;
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!before(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  peek() {
    return this.items[0];
  }
  pop() {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l], a[m])) m = l;
        if (r < a.length && before(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}
const before = (x, y) => x.t < y.t || (x.t === y.t && x.order < y.order);
