// Each entry of the package declares exactly the values it exports: node.js against repute.d.ts
// (what `import … from "repute"` gets in Node), web.js against web.d.ts (browsers, edge),
// lib/crawlee/index.js against crawlee.d.ts (`repute/crawlee`), lib/client/client.js against
// client.d.ts (`repute/client`), lib/node/http-server.js against server.d.ts (`repute/server`),
// lib/http/handler-entry.js against handler.d.ts (`repute/handler`). The installed package's
// entries, `repute/edge` included, are checked by tests/package/. The
// runtime's export names are read by importing the entry; tsc then checks a file that spells
// them as `{ [K in keyof typeof entry]-?: true }` — a declared value the entry lacks is a
// missing property, an exported value the declarations lack an excess one. Two control runs
// (a name added, a name dropped) show the check fails when they differ.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const tsc = join(here, "../../pkg-scripts/node_modules/.bin/tsc");
const compilerOptions = JSON.parse(
  readFileSync(join(here, "tsconfig.json"), "utf8").replace(/^\s*\/\/.*$/gm, ""),
).compilerOptions;

/** Does tsc accept `names` as exactly the value exports declared for `specifier`? */
function declaredExactly(specifier, names) {
  const dir = mkdtempSync(join(here, ".exports-"));
  try {
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["check.ts"] }));
    writeFileSync(
      join(dir, "check.ts"),
      `import * as entry from ${JSON.stringify(specifier)};\n` +
        `export const exact: { [K in keyof typeof entry]-?: true } = { ${names.map((n) => `${n}: true`).join(", ")} };\n`,
    );
    const r = spawnSync(tsc, ["-p", dir, "--noEmit"], { encoding: "utf8" });
    return { ok: r.status === 0, output: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const [entry, specifier, expected] of [
  ["node.js", "repute", ["Bulkhead", "CallError", "HedgeBudget", "Pool", "PoolHost", "ProbeError", "RetryBudget", "credentialCache", "hedgeBudget", "httpProbe", "openPool", "proxyFetch", "proxyUrls", "redactCredentials", "retryBudget"]],
  ["lib/crawlee/index.js", "repute/crawlee", ["BLOCKED_STATUS_CODES", "ReputeProxyConfiguration", "RequestBlockedError"]],
  ["web.js", "../../../pkg-scripts/types/web.js", ["Pool", "init"]],
  ["lib/client/client.js", "repute/client", ["CLIENT_CODES", "PoolClient", "PoolClientError", "connectPool"]],
  ["lib/node/http-server.js", "repute/server", ["isLoopback", "serve"]],
  ["lib/http/handler-entry.js", "repute/handler", ["MemoryHost", "createHandler"]],
]) {
  test(`${entry} exports exactly the values its declarations name`, async () => {
    const names = Object.keys(await import(`../../pkg-scripts/${entry}`)).sort();
    assert.deepEqual(names, expected);
    const exact = declaredExactly(specifier, names);
    assert.ok(exact.ok, exact.output);
    const extra = declaredExactly(specifier, [...names, "notExported"]);
    assert.ok(!extra.ok && /notExported/.test(extra.output), `an undeclared export is caught:\n${extra.output}`);
    const fewer = declaredExactly(specifier, names.slice(1));
    assert.ok(!fewer.ok && fewer.output.includes(names[0]), `a declared value that is not exported is caught:\n${fewer.output}`);
  });
}
