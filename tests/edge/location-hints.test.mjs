// The edge worker pins each region's Durable Object to a place: REPUTE_LOCATION_HINTS maps a
// region name to a location hint, and the worker passes it to `POOL.get(id, { locationHint })`
// when it reaches that region's object. In real workerd (Miniflare), with the POOL binding
// recorded on its way to the real namespace (_location-hint-recorder.js): a listed region gets
// its hint, a region not listed gets none and is served all the same, the map works as an
// object (wrangler.toml's table) and as JSON text; a bad map is a 500 naming the binding and
// the entry; and the shipped wrangler.toml gives a valid hint to every region it serves.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { workerOptions } from "../../pkg-scripts/lib/edge/dev.js";
import { LOCATION_HINTS } from "../../pkg-scripts/lib/edge/regions.js";
import { tempDir } from "./_edge-support.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRANGLER = readFileSync(path.join(ROOT, "pkg-scripts/lib/edge/wrangler.toml"), "utf8");

/** The shipped wrangler.toml's [vars.REPUTE_LOCATION_HINTS] table and its REPUTE_REGIONS. */
function shipped() {
  const table = /^\[vars\.REPUTE_LOCATION_HINTS\]\n((?:(?:[a-z0-9-]+ = "[a-z]+"|#.*)\n)+)/m.exec(WRANGLER);
  assert.ok(table, "wrangler.toml has a [vars.REPUTE_LOCATION_HINTS] table");
  const hints = Object.fromEntries([...table[1].matchAll(/^([a-z0-9-]+) = "([a-z]+)"$/gm)].map((m) => [m[1], m[2]]));
  const regions = /^REPUTE_REGIONS = "([^"]*)"$/m.exec(WRANGLER)[1].split(",");
  return { hints, regions };
}

/** The worker, behind the recorder, in workerd with `bindings`; `call(region, method, path, body)`. */
async function edge(bindings) {
  const { Miniflare } = await import("miniflare");
  const persist = await tempDir("hints");
  const options = workerOptions({ persist, bindings });
  const mf = new Miniflare({ ...options, scriptPath: path.join(ROOT, "tests/edge/_location-hint-recorder.js"), modulesRoot: ROOT });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return {
    async call(region, method, p, body) {
      const r = await fetch(`${url}/regions/${region}${p}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body && JSON.stringify(body) });
      return { status: r.status, text: await r.text(), asked: JSON.parse(r.headers.get("x-test-get-options") ?? "null") };
    },
    async close() {
      await mf.dispose();
      await rm(persist, { recursive: true, force: true });
    },
  };
}

test("a listed region is reached with its location hint, one not listed with none, and both are served", async () => {
  for (const hints of [{ eu: "weur", "us-east": "enam" }, JSON.stringify({ eu: "weur", "us-east": "enam" })]) {
    const e = await edge({ REPUTE_LOCATION_HINTS: hints });
    try {
      const eu = await e.call("eu", "POST", "/api/resources", { kind: "PROXY", value: "proxy-eu-1" });
      assert.equal(eu.status, 201, eu.text);
      assert.deepEqual(eu.asked, [{ locationHint: "weur" }], `eu is pinned to weur (${typeof hints})`);
      const us = await e.call("us-east", "POST", "/api/leases", { context: "shop.example" });
      assert.equal(us.status, 409, "an empty pool has nothing to lease: the object answered");
      assert.deepEqual(us.asked, [{ locationHint: "enam" }]);
      const other = await e.call("ap-south", "POST", "/api/resources", { kind: "PROXY", value: "proxy-ap-1" });
      assert.equal(other.status, 201, other.text);
      assert.deepEqual(other.asked, [null], "a region with no hint is asked for with none");
      // Each region is its own pool, whatever its hint.
      const listed = JSON.parse((await e.call("eu", "GET", "/api/resources")).text).resources.map((r) => r.value);
      assert.deepEqual(listed, ["proxy-eu-1"]);
    } finally {
      await e.close();
    }
  }
});

test("without REPUTE_LOCATION_HINTS no region is given a hint", async () => {
  const e = await edge({});
  try {
    const r = await e.call("eu", "GET", "/api/stats");
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.asked, [null]);
  } finally {
    await e.close();
  }
});

test("a bad map is a 500 misconfigured naming the binding and the entry, and no object is reached", async () => {
  const cases = [
    [{ eu: "mars" }, /REPUTE_LOCATION_HINTS\.eu is not a location hint \(one of wnam, enam, sam, weur, eeur, apac, oc, afr, me\)/],
    [{ eu: "weur", "Not A Region": "enam" }, /REPUTE_LOCATION_HINTS: entry 2 is not a region name/],
    ["{eu: weur}", /REPUTE_LOCATION_HINTS: not JSON/],
    [["weur"], /REPUTE_LOCATION_HINTS: not an object/],
  ];
  for (const [hints, message] of cases) {
    const e = await edge({ REPUTE_LOCATION_HINTS: hints });
    try {
      const r = await e.call("eu", "GET", "/api/stats");
      assert.equal(r.status, 500, r.text);
      assert.match(r.text, /misconfigured/);
      assert.match(r.text, message);
      assert.deepEqual(r.asked, [], "no object was asked for");
    } finally {
      await e.close();
    }
  }
});

test("the shipped wrangler.toml pins every region it serves to a valid place, and the worker uses that map", async () => {
  const { hints, regions } = shipped();
  assert.ok(regions.length >= 2);
  for (const region of regions) assert.ok(Object.hasOwn(LOCATION_HINTS, hints[region]), `${region} has a valid hint (${hints[region]})`);
  const e = await edge({ REPUTE_LOCATION_HINTS: hints, REPUTE_REGIONS: regions.join(",") });
  try {
    for (const region of regions) {
      const r = await e.call(region, "GET", "/api/stats");
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.asked, [{ locationHint: hints[region] }], region);
    }
  } finally {
    await e.close();
  }
});
