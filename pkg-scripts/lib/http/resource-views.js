// The dashboard (`GET /api/resources`) as the HTTP API shows it: each ResourceView with its
// opaque `id` beside its value, and for a viewer the value masked, in the view and in its
// leases (`lease` and each of `leases`), by the engine's rule (`host.maskValue`). Operators (and
// every caller of a server without tokens) see values as they are; a worker reads no view, and
// gets the value in its lease. The ids themselves are the host's (`resource-id.js`).

/** `views` (the engine's ResourceViews) with `id` after `value`; values masked when `masked`. */
export function showResources(host, views, { masked }) {
  return views.map((view) => {
    const { kind, value, lease, leases, ...rest } = view;
    const shown = masked ? host.maskValue(kind, value) : value;
    const out = { kind, value: shown, id: host.resourceId(kind, value) };
    const mask = (l) => (l && masked ? { ...l, value: shown } : l);
    // The view's other keys in their order; its leases name the same resource.
    for (const key of Object.keys(view)) {
      if (key === "lease") out.lease = mask(lease);
      else if (key === "leases") out.leases = masked ? leases.map(mask) : leases;
      else if (!(key in out)) out[key] = rest[key];
    }
    return out;
  });
}
