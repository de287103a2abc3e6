// `repute/crawlee`: a Crawlee ProxyConfiguration backed by a repute pool (README "Crawlee").
// Needs `@crawlee/core` 3 (installed with `crawlee` or `@crawlee/http` / `@crawlee/cheerio`),
// an optional peer dependency of the package: only this entry imports it.
export { ReputeProxyConfiguration } from "./proxy-configuration.js";
export { RequestBlockedError } from "./blocked-error.js";
export { BLOCKED_STATUS_CODES } from "./outcome.js";
