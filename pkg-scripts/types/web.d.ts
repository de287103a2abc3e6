// Types of the web entry (`browser`, `workerd`, `default` conditions): the engine's `Pool` and
// its types (pool.d.ts) plus `init`, which must be awaited once before a `Pool` is made. The
// Node runtime (openPool, httpProbe, …) is not part of this entry.
export * from "./pool.js";

/** Loads the engine from a URL, its bytes, or a precompiled `WebAssembly.Module`
 * (edge runtimes allow only the last); with no argument, the .wasm next to this module. */
export declare function init(
  input?: string | URL | Request | Response | BufferSource | WebAssembly.Module,
): Promise<void>;
