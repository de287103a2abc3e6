// Not a test file: the real edge worker (pkg-scripts/lib/edge/worker.js) as workerd runs it, with
// its `POOL` binding passed through a wrapper that records the options of each `get` — and
// calls the real Durable Object namespace with them — and sends them back in a response header
// (`x-test-get-options`), so a test sees which location hint the worker asked for.
import worker from "../../pkg-scripts/lib/edge/worker.js";

export { PoolObject } from "../../pkg-scripts/lib/edge/worker.js";

export default {
  async fetch(request, env) {
    const asked = [];
    const pool = {
      idFromName: (name) => env.POOL.idFromName(name),
      get(id, options) {
        asked.push(options ?? null);
        return env.POOL.get(id, options);
      },
    };
    const response = await worker.fetch(request, { ...env, POOL: pool });
    const out = new Response(response.body, response);
    out.headers.set("x-test-get-options", JSON.stringify(asked));
    return out;
  },
};
