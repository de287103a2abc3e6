// Types of `repute/edge`: the edge worker (a module worker for workerd / Cloudflare Workers) and
// its Durable Object class, one pool per region. It imports the engine as a `.wasm` module, so it
// loads in workerd (or a bundler that handles such imports), not in Node. Bindings: README "Edge
// worker" and lib/edge/wrangler.toml.

/** The region's Durable Object: one pool, served over the HTTP API under /regions/{region}/. */
export declare class PoolObject {
  constructor(ctx: unknown, env: Record<string, unknown>);
  fetch(request: Request): Promise<Response>;
  alarm(): Promise<void>;
}

/** The worker: routes /regions/{region}/… to that region's PoolObject (binding `POOL`). */
declare const worker: {
  fetch(request: Request, env: Record<string, unknown>): Promise<Response>;
};
export default worker;
