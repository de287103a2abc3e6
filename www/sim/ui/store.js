// The workspace in IndexedDB (database "repute-console", store "workspace", key "current"), so
// it survives a reload. Storage that fails (private mode, quota) is reported to the caller and
// changes nothing else: the console keeps working on the workspace in memory.

const DB = "repute-console";
const STORE = "workspace";
const KEY = "current";

function open() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function transact(mode, fn) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("the storage transaction was aborted"));
    });
  } finally {
    db.close();
  }
}

/** The stored workspace's JSON text, or null. */
export const loadStored = () => transact("readonly", (s) => s.get(KEY)).then((v) => v ?? null);

/** Stores the workspace (as JSON text). */
export const saveStored = (text) => transact("readwrite", (s) => s.put(text, KEY));
