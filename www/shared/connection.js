// The connection to a pool server, shared by live and simulation mode: its URL and bearer token
// (kept in sessionStorage only, never in a URL), and `request()` for its HTTP API, which turns a
// problem+json answer into an `ApiError` carrying the server's message.

const KEY = "repute.connection";

/** A refused or failed API call: `status` (0 when no answer), `problem` (the problem+json body, if any). */
export class ApiError extends Error {
  constructor(message, status, problem = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem;
  }
}

export class Connection extends EventTarget {
  url = "";
  token = "";
  connected = false;
  /** The token's role ("operator", "viewer", "worker") and name, from `GET /api/session`;
   * null before a connection, or from a server that does not say (then nothing is hidden). */
  role = null;
  name = null;

  constructor() {
    super();
    const saved = JSON.parse(sessionStorage.getItem(KEY) ?? "null");
    this.url = saved?.url ?? location.origin;
    this.token = saved?.token ?? "";
  }

  /** Sets the server and token, checks them with `GET /api/config`, learns the token's role
   * (`GET /api/session`), and tells listeners ("change"). */
  async connect(url, token) {
    this.url = url.replace(/\/+$/, "");
    this.token = token;
    sessionStorage.setItem(KEY, JSON.stringify({ url: this.url, token: this.token }));
    this.connected = false;
    this.role = this.name = null;
    try {
      const [, session] = await Promise.all([
        this.request("GET", "/api/config"),
        this.request("GET", "/api/session").catch((e) => (e.status === 404 ? null : Promise.reject(e))),
      ]);
      this.role = session?.role ?? null;
      this.name = session?.name ?? null;
      this.connected = true;
    } finally {
      this.dispatchEvent(new Event("change"));
    }
  }

  disconnect() {
    this.connected = false;
    sessionStorage.removeItem(KEY);
    this.dispatchEvent(new Event("change"));
  }

  /** Whether the token may do what only an operator may (true when the server does not say). */
  get operator() {
    return this.role === null || this.role === "operator";
  }

  /** Headers for a call to the server (the token, when there is one). */
  headers(extra = {}) {
    return this.token ? { ...extra, authorization: `Bearer ${this.token}` } : extra;
  }

  /** One API call; resolves to the parsed JSON body (or the text, or null; `text: true`: the
   * body's text as sent, e.g. a snapshot's canonical bytes), throws `ApiError`. */
  async request(method, path, { body, headers = {}, signal, text: asText = false } = {}) {
    const init = { method, headers: this.headers(headers), signal };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers["content-type"] ??= "application/json";
    }
    let res;
    try {
      res = await fetch(this.url + path, init);
    } catch (e) {
      throw new ApiError(`cannot reach ${this.url}: ${e.message}`, 0);
    }
    const type = res.headers.get("content-type") ?? "";
    const text = await res.text();
    if (!res.ok) {
      let problem = null;
      if (type.startsWith("application/problem+json")) problem = JSON.parse(text);
      throw new ApiError(problem?.detail ?? `${res.status} ${res.statusText}`, res.status, problem);
    }
    if (!text) return null;
    return type.startsWith("application/json") && !asText ? JSON.parse(text) : text;
  }
}
