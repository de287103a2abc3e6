// The ready-made recovery probe for PROXY resources: it fetches the
// health URL of the cell's context through the proxy, and classifies the answer by the one
// table of lib/outcome/classify.js, as real traffic is. startProber (prober.js) runs it.

import { Buffer } from "node:buffer";
import { performance } from "node:perf_hooks";
import { ProxyAgent, request } from "undici";
import { classifyError, classifyResult } from "../outcome/classify.js";
import { redactCredentials } from "../outcome/redact.js";
import { ProbeError, fn, invalid, positive } from "./probe-error.js";

/** A probe's outcome from the classification's verdict (lib/outcome/classify.js): `null` when
 * it says nothing about the proxy (an inconclusive probe). */
function probeOutcome(v, latencyMs) {
  if (v.report === null) return null;
  const withLatency = latencyMs === undefined ? {} : { latencyMs };
  return v.report === "ok" ? { ok: true, ...withLatency } : { ok: false, failure: v.report, ...withLatency };
}

/**
 * A probe for PROXY resources: fetches the health URL of the cell's context through the proxy
 * (the resource's value, an `http://` or `https://` proxy URL, optionally with `user:pass@`
 * credentials, sent as `Proxy-Authorization: Basic`). Plain-`http:` targets are sent to the
 * proxy as absolute-URI requests; `https:` targets go through a CONNECT tunnel. Every probe
 * uses a fresh connection (its own `undici` `ProxyAgent`, destroyed afterwards), reads at most
 * 64 KiB of the body and follows no redirect.
 *
 * A context missing from `targets` resolves to `null`: the prober reports nothing and the cell
 * stays due (configure a target for every context whose proxies should be probed).
 *
 * Classification: the one table of lib/outcome/classify.js (README "What an outcome says about
 * a resource"), as for real traffic — latency measured from the request to the end of the body,
 * a success at least `slowMs` slow is `SLOW`. Where that table reports nothing (404, 500, 503 …)
 * the probe throws a `ProbeError` with code `PROBE_INCONCLUSIVE` and `status`: the answer came
 * through the proxy, so it speaks about the target, not the proxy; penalising every proxy for a
 * misconfigured or sick health URL would cool the whole fleet, while an unreported cell simply
 * stays cooling. The prober hands the error to `onError`, so the misconfiguration is seen.
 * No answer within `timeoutMs` is `TIMEOUT`; the caller's `signal` aborting throws an
 * `AbortError` (nothing to report); an error that is not a network failure throws a
 * `ProbeError` `PROBE_FAILED`.
 *
 * No error this probe throws carries the proxy's credentials (`user:pass@` is redacted, and no
 * `cause` is attached).
 *
 * @param {object} options
 * @param {Record<string, string> | Map<string, string>} options.targets context → URL to fetch
 * @param {number} [options.timeoutMs=10000] the whole request's deadline
 * @param {number} [options.slowMs=Infinity] a success at least this slow is reported as `SLOW`
 * @param {() => number} [options.now] monotonic clock in ms, for latency
 * @returns {import("./prober.js").ProbeFn}
 */
export function httpProbe({ targets, timeoutMs = 10000, slowMs = Infinity, now = () => performance.now() } = {}) {
  const table = new Map();
  if (targets instanceof Map) {
    for (const [k, v] of targets) table.set(k, v);
  } else if (typeof targets === "object" && targets !== null) {
    for (const k of Object.keys(targets)) table.set(k, targets[k]);
  } else {
    throw invalid("targets must be an object or a Map from context to URL");
  }
  for (const [context, url] of table) {
    let u;
    try {
      u = new URL(url);
    } catch {
      throw invalid(`targets[${JSON.stringify(context)}] is not a URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw invalid(`targets[${JSON.stringify(context)}] must be an http: or https: URL`);
    }
    table.set(context, u.href);
  }
  positive("timeoutMs", timeoutMs);
  if (!(typeof slowMs === "number" && slowMs >= 0)) throw invalid("slowMs must be a number >= 0");
  fn("now", now);

  return async function probeHttp({ kind, value, context, signal }) {
    if (kind !== "PROXY") throw invalid(`httpProbe only probes PROXY resources, not ${kind}`);
    const target = table.get(context);
    if (target === undefined) return null;

    let proxy;
    try {
      proxy = new URL(value);
    } catch {
      proxy = null;
    }
    if (!proxy || (proxy.protocol !== "http:" && proxy.protocol !== "https:")) {
      // The value is not echoed: a malformed URL may hide credentials from any redaction.
      throw invalid("the resource's value is not an http: or https: proxy URL");
    }
    const user = decodeURIComponent(proxy.username);
    const pass = decodeURIComponent(proxy.password);
    const token = user || pass ? `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` : undefined;
    const secrets = [token, proxy.username && `${proxy.username}:${proxy.password}`, pass.length >= 4 && pass].filter(Boolean);
    const where = `${proxy.protocol}//${proxy.host}`; // the proxy, without its credentials
    const redact = (text) => {
      let out = redactCredentials(text);
      for (const s of secrets) out = out.split(s).join("***");
      return out;
    };

    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const agent = new ProxyAgent({
      uri: `${proxy.protocol}//${proxy.host}`,
      token,
      proxyTunnel: false,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const start = now();
    try {
      const res = await request(target, {
        method: "GET",
        dispatcher: agent,
        signal: both,
        headers: { accept: "*/*", "user-agent": "repute-prober" },
      });
      await res.body.dump({ limit: 65536, signal: both });
      const latencyMs = Math.max(0, now() - start);
      const outcome = probeOutcome(await classifyResult({ statusCode: res.statusCode }, { latencyMs, slowThresholdMs: slowMs }), latencyMs);
      if (outcome) return outcome;
      throw new ProbeError(
        `the probe target ${redact(target)} answered ${res.statusCode} through the proxy ${where}: ` +
          "this says nothing about the proxy, so nothing was reported",
        "PROBE_INCONCLUSIVE",
        { status: res.statusCode },
      );
    } catch (error) {
      if (error instanceof ProbeError) throw error;
      if (signal?.aborted) {
        const e = new Error("the probe was aborted");
        e.name = "AbortError";
        e.code = "ABORT_ERR";
        throw e;
      }
      if (timeout.aborted) return { ok: false, failure: "TIMEOUT" };
      const failure = probeOutcome(classifyError(error));
      if (failure) return failure;
      throw new ProbeError(`the probe through ${where} failed: ${redact(error?.message ?? error)}`, "PROBE_FAILED");
    } finally {
      await agent.destroy().catch(() => {});
    }
  };
}
