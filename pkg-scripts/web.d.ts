// Types of the web entry (`browser`, `workerd`, `default` conditions): the package's types
// plus `init`, which must be awaited once before a `Pool` is made.
export * from "./repute.js";

/** Loads the engine from a URL, its bytes, or a precompiled `WebAssembly.Module`
 * (edge runtimes allow only the last); with no argument, the .wasm next to this module. */
export declare function init(
  input?: string | URL | Request | Response | BufferSource | WebAssembly.Module,
): Promise<void>;
