// The pool of the console's health and layout tests (not a test file: no `.test.` in the name):
// sites where resources burn, named so that rows differ at their start.

export const value = (i) => `gate-${String(i).padStart(2, "0")}.customer-zone.resi.example.com:7000`;

/** 12 proxies; on checkout-us four are blocked once (HEALTHY at a negative score: failing) and one
 * twice (COOLING); search-eu is fine; news-de: 12 acquires granted, 1 rejected. */
export async function burningPool(pool) {
  for (let i = 0; i < 12; i++) await pool.register("PROXY", value(i), { group: i < 6 ? "dc" : "residential" });
  for (let i = 0; i < 12; i++) {
    pool.report("PROXY", value(i), "search-eu", { ok: true, latencyMs: 80 + i });
    pool.report("PROXY", value(i), "checkout-us", i < 5 ? { ok: false, failure: "BLOCKED", latencyMs: 300 } : { ok: true, latencyMs: 150 + i });
  }
  pool.report("PROXY", value(4), "checkout-us", { ok: false, failure: "BLOCKED", latencyMs: 310 });
  for (let i = 0; i < 13; i++) pool.acquire("news-de");
  await pool.register("PROXY", SECRET_VALUE);
}

/** A value with a password: masked on screen unless an operator asks to see it. */
export const SECRET_VALUE = "http://zone-a:hunter2-secret@gate-99.example.com:7000";

