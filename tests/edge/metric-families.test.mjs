// One set of metric families on every host (pkg-scripts/lib/host/metric-families.js): the Node
// host (`openPool`, a data folder), the edge worker's Durable Object host (in workerd, through
// Miniflare) and the memory host render the same families — names, types and help texts — in
// the same order, and each family of the table is among them. Before the table, the Node and
// the edge texts were written twice and their help texts had drifted apart.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { disposeWorkers, edgeServer } from "./_edge-support.mjs";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { MemoryHost } from "../../pkg-scripts/lib/host/memory-host.js";
import { FAMILIES } from "../../pkg-scripts/lib/host/metric-families.js";
import { Pool } from "../../pkg-scripts/node.js";

after(disposeWorkers);

/** The `# HELP` and `# TYPE` lines of a text exposition, in order. */
const heads = (text) => text.split("\n").filter((l) => l.startsWith("# HELP ") || l.startsWith("# TYPE "));

test("Node, the edge and the memory host render the same metric families with the same help texts", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "repute-families-"));
  const node = await openPool({ dir, handleSignals: false, checkpointMs: 0 });
  const memory = await MemoryHost.create({ Pool });
  try {
    const edge = await edgeServer({});
    const res = await fetch(`${edge.url}/metrics`);
    assert.equal(res.status, 200);
    const onEdge = heads(await res.text());
    const onNode = heads(await node.metrics());
    const inMemory = heads(await memory.metrics());
    const table = FAMILIES.flatMap((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`]);
    assert.ok(table.length >= 30, `the table has the families (${table.length / 2})`);
    assert.deepEqual(onNode, table, "Node renders the table");
    assert.deepEqual(onEdge, table, "the edge renders the table");
    assert.deepEqual(inMemory, table, "the memory host renders the table");
  } finally {
    memory.close();
    await node.close();
    await rm(dir, { recursive: true, force: true });
  }
});
