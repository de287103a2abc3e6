// The set-up steps of pkg-scripts (lib/setup.sh and the scripts that source it) on a bare
// machine, in seconds and with no real install: each script runs from a copy of the project's
// scripts in a temporary tree, on a PATH that holds only the basic system commands and
// stand-ins for the tools it installs. The stand-ins record what they are asked to do and,
// when asked to install something, put a working stand-in of it on the PATH — so a test sees
// both that the install happened and that the script went on. A failing install must stop the
// script with a message naming the step and the fix, never a silent exit.
//
// The fault this guards against: `have=$(tool --version | awk …)` under `set -euo pipefail`
// killed the script (status 127, no message) when the tool was absent, before it could install
// anything; and `tool | grep -q` can kill its writer with SIGPIPE. The `rustup target list`
// stand-in prints a long list after the line the script looks for, so a `| grep -q` reader
// makes its writer fail under pipefail.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, copyFileSync, readFileSync, existsSync, symlinkSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = new URL("../../", import.meta.url).pathname;
const SCRIPTS = ["build", "test", "start", "perf/bench", "perf/bench-edge", "perf/load", "perf/profile", "prepack", "lib/setup.sh"];
const WANT = /name = "wasm-bindgen"\nversion = "([^"]+)"/.exec(readFileSync(join(repo, "Cargo.lock"), "utf8"))[1];
const TOOLCHAIN = /channel = "([^"]+)"/.exec(readFileSync(join(repo, "rust-toolchain.toml"), "utf8"))[1];

/** Basic commands the scripts use and never install: the real ones, linked into the PATH. */
const BASICS = ["bash", "sh", "env", "dirname", "basename", "sed", "awk", "grep", "cat", "cut", "ln", "sha256sum",
  "gzip", "wc", "mktemp", "rm", "mkdir", "cp", "chmod", "head", "tail", "tr", "touch", "ls", "readlink", "printf", "seq"];

function which(cmd) {
  return execFileSync("bash", ["-c", `command -v ${cmd}`], { encoding: "utf8" }).trim();
}

const sh = (body) => `#!${which("bash")}\n${body}\n`;
const LOG = 'echo "$(basename "$0") $*" >> "$STANDIN_LOG"';
const FAILS = (what) => `case " $STANDIN_FAIL " in *" ${what} "*) echo "${what}: simulated failure" >&2; exit 1;; esac`;

/** Stand-in scripts, by name; `$STANDIN_BIN` is the PATH folder, `$STANDIN_STATE` a folder of
 * files saying what is installed. */
const STANDINS = {
  rustup: sh(`
state="$STANDIN_STATE"
case "$1 $2" in
  "toolchain list") cat "$state/toolchains" 2>/dev/null ;;
  "toolchain install") ${LOG}; ${FAILS("rustup-toolchain")}; echo "$3-x86_64-unknown-linux-gnu" >> "$state/toolchains" ;;
  "component list") cat "$state/components" 2>/dev/null ;;
  "component add") ${LOG}; ${FAILS("rustup-component")}; printf 'rustfmt-x86_64\\nclippy-x86_64\\n' >> "$state/components" ;;
  "target list")
    cat "$state/targets" 2>/dev/null
    # a long tail after the line looked for: a '| grep -q' reader exits early and this write fails
    [ -s "$state/targets" ] && seq 1 200000 | sed 's/^/filler-target-/' ;;
  "target add") ${LOG}; ${FAILS("rustup-target")}; echo wasm32-unknown-unknown >> "$state/targets" ;;
  *) ${LOG} ;;
esac`),
  cargo: sh(`
case "$1" in
  install) ${LOG}; ${FAILS("cargo-install")}
    v=""; while [ $# -gt 0 ]; do [ "$1" = --version ] && v=$2; shift; done
    printf '%s\\n' '#!${which("bash")}' \
      'if [ "$1" = --version ]; then echo "wasm-bindgen '"$v"'"; exit 0; fi' \
      'echo "$(basename "$0") $*" >> "$STANDIN_LOG"' \
      'while [ $# -gt 0 ]; do [ "$1" = --out-dir ] && { mkdir -p "$2"; echo glue > "$2/repute.js"; echo wasm > "$2/repute_bg.wasm"; }; shift; done' \
      > "$STANDIN_BIN/wasm-bindgen"
    printf '%s\\n' '#!${which("bash")}' \
      'if [ "$1" = --version ]; then echo "wasm-bindgen-test-runner '"$v"'"; exit 0; fi' \
      'echo "$(basename "$0") $*" >> "$STANDIN_LOG"' > "$STANDIN_BIN/wasm-bindgen-test-runner"
    chmod +x "$STANDIN_BIN/wasm-bindgen" "$STANDIN_BIN/wasm-bindgen-test-runner" ;;
  build) ${LOG}; mkdir -p target/wasm32-unknown-unknown/wasm; echo wasm > target/wasm32-unknown-unknown/wasm/repute.wasm ;;
  --version) echo "cargo 1.95.0 (stand-in)" ;;
  # a run in the browser says so, and which driver it was given
  test) echo "cargo $*\${WASM_BINDGEN_USE_BROWSER:+ (browser, CHROMEDRIVER=\$CHROMEDRIVER)}" >> "$STANDIN_LOG" ;;
  *) ${LOG} ;;
esac`),
  node: sh(`
if [ "$1" = --version ]; then echo "\${STANDIN_NODE_VERSION:-v20.20.2}"; exit 0; fi
${LOG}`),
  npm: sh(`
${LOG}
if [ "$1" = ci ]; then
  ${FAILS("npm-ci")}
  mkdir -p node_modules/.bin
  printf '%s\\n' '#!${which("bash")}' 'echo "wasm-opt $*" >> "$STANDIN_LOG"' \
    'in=$1; while [ $# -gt 0 ]; do [ "$1" = -o ] && cp "$in" "$2"; shift; done' > node_modules/.bin/wasm-opt
  printf '%s\\n' '#!${which("bash")}' 'echo "tsc $*" >> "$STANDIN_LOG"' > node_modules/.bin/tsc
  chmod +x node_modules/.bin/wasm-opt node_modules/.bin/tsc
  mkdir -p node_modules/uplot/dist && touch node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css
fi`),
  "apt-get": sh(`
${LOG}
case "$1" in
  update) ${FAILS("apt-update")}; touch "$STANDIN_STATE/apt-lists" ;;
  install)
    ${FAILS("apt-install")}
    # like a fresh Debian container: no package lists until the first update
    [ -f "$STANDIN_STATE/apt-lists" ] || { echo "E: Unable to locate package chromium" >&2; exit 100; }
    for t in chromium chromedriver; do
      printf '%s\\n' '#!${which("bash")}' "echo \\"$t 156.0 (stand-in)\\"" > "$STANDIN_BIN/$t"
      chmod +x "$STANDIN_BIN/$t"
    done ;;
esac`),
  id: sh(`[ "$1" = -u ] && echo "\${STANDIN_UID:-0}" || echo "uid=\${STANDIN_UID:-0}"`),
};

/**
 * A bare machine: a temporary project tree (copies of the scripts, the real Cargo.lock and
 * rust-toolchain.toml) and a PATH of basics plus stand-ins. `have` lists what is already
 * installed: "toolchain", "components", "target", "wasm-bindgen", "npm", "chromium".
 */
function bareMachine({ have = [], omit = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "repute-setup-"));
  const root = join(dir, "project");
  const bin = join(dir, "bin");
  const state = join(dir, "state");
  for (const d of [join(root, "pkg-scripts", "lib"), join(root, "pkg-scripts", "bin"), join(root, "pkg-scripts", "perf"), bin, state]) mkdirSync(d, { recursive: true });
  for (const s of SCRIPTS) copyFileSync(join(repo, "pkg-scripts", s), join(root, "pkg-scripts", s));
  for (const f of ["Cargo.lock", "rust-toolchain.toml"]) copyFileSync(join(repo, f), join(root, f));
  writeFileSync(join(root, "pkg-scripts", "package-lock.json"), '{"lockfileVersion": 3}\n');
  for (const f of ["web.js", "lib/pool.js", "lib/pool-args.js", "lib/pool-events.js", "lib/mulberry32.js", "lib/vocabulary.js", "lib/waiters.js"]) writeFileSync(join(root, "pkg-scripts", f), "// stand-in\n");
  // What prepack brings into the package besides the build's output.
  for (const [f, text] of [["LICENSE", "MIT (stand-in)\n"], ["README.md", "# repute (stand-in)\n"], ["repute.config.schema.json", "{}\n"], ["repute.config.json", "{}\n"], ["www/index.html", "<!doctype html>\n"]]) {
    mkdirSync(join(root, f, ".."), { recursive: true });
    writeFileSync(join(root, f), text);
  }
  for (const b of BASICS) symlinkSync(which(b), join(bin, b));
  for (const [name, body] of Object.entries(STANDINS)) {
    if (omit.includes(name)) continue;
    writeFileSync(join(bin, name), body);
    chmodSync(join(bin, name), 0o755);
  }
  const env = { PATH: bin, HOME: dir, STANDIN_BIN: bin, STANDIN_STATE: state, STANDIN_LOG: join(dir, "log"), LANG: "C" };
  writeFileSync(env.STANDIN_LOG, "");
  const run = (args, extraEnv = {}) => spawnSync(join(bin, "bash"), args, { cwd: root, env: { ...env, ...extraEnv }, encoding: "utf8" });
  // What "already installed" means for each tool.
  if (have.includes("toolchain")) writeFileSync(join(state, "toolchains"), `${TOOLCHAIN}-x86_64-unknown-linux-gnu (active)\n`);
  if (have.includes("components")) writeFileSync(join(state, "components"), "rustfmt-x86_64\nclippy-x86_64\n");
  if (have.includes("target")) writeFileSync(join(state, "targets"), "wasm32-unknown-unknown\n");
  if (have.includes("wasm-bindgen")) run(["-c", `cargo install wasm-bindgen-cli --version ${WANT}`]);
  if (have.includes("chromium")) {
    writeFileSync(join(state, "apt-lists"), "");
    run(["-c", "apt-get install chromium chromium-driver"]);
  }
  if (have.includes("npm")) {
    run(["-c", `set -euo pipefail; . pkg-scripts/lib/setup.sh; ensure_npm`]);
  }
  writeFileSync(env.STANDIN_LOG, "");
  return {
    root,
    bin,
    /** Sources setup.sh under the callers' shell options, runs `steps`, then says it went on. */
    step(steps, extraEnv) {
      return run(["-c", `set -euo pipefail; . pkg-scripts/lib/setup.sh; ${steps}; echo "went on"`], extraEnv);
    },
    script(name, args = [], extraEnv) {
      return run([join(root, "pkg-scripts", name), ...args], extraEnv);
    },
    log: () => readFileSync(env.STANDIN_LOG, "utf8"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function machine(t, options) {
  const m = bareMachine(options);
  t.after(m.cleanup);
  return m;
}

const ALL = ["toolchain", "components", "target", "wasm-bindgen", "npm", "chromium"];

/** Each step: what is absent, what must be installed, what the note says. */
const STEPS = [
  { name: "ensure_rust (toolchain)", step: "ensure_rust", have: ["components", "target"], install: `rustup toolchain install ${TOOLCHAIN}`, note: `installing Rust ${TOOLCHAIN}`, fail: "rustup-toolchain" },
  { name: "ensure_rust (rustfmt, clippy)", step: "ensure_rust", have: ["toolchain", "target"], install: "rustup component add", note: "installing rustfmt and clippy", fail: "rustup-component" },
  { name: "ensure_rust (wasm32 target)", step: "ensure_rust", have: ["toolchain", "components"], install: "rustup target add", note: "installing the Rust target wasm32-unknown-unknown", fail: "rustup-target" },
  { name: "ensure_wasm_bindgen", step: "ensure_wasm_bindgen", have: [], install: `cargo install wasm-bindgen-cli --version ${WANT}`, note: `installing wasm-bindgen-cli ${WANT}`, fail: "cargo-install" },
  { name: "ensure_wasm_bindgen_test_runner", step: "ensure_wasm_bindgen_test_runner", have: [], install: `cargo install --force wasm-bindgen-cli --version ${WANT}`, note: `installing wasm-bindgen-cli ${WANT} for its wasm-bindgen-test-runner`, fail: "cargo-install" },
  { name: "ensure_npm", step: "ensure_npm", have: [], install: "npm ci", note: "installing the npm packages", fail: "npm-ci" },
  { name: "ensure_chromium", step: "ensure_chromium", have: [], install: "apt-get install -y -qq --no-install-recommends chromium chromium-driver", note: "installing Debian's chromium", fail: "apt-install" },
];

for (const s of STEPS) {
  test(`${s.name}: the tool is absent → installed with a one-line note, and the script goes on`, (t) => {
    const m = machine(t, { have: s.have });
    const r = m.step(s.step);
    assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}`);
    assert.match(r.stdout, /went on/);
    assert.ok(m.log().includes(s.install), `asked to run "${s.install}"; log:\n${m.log()}`);
    assert.ok(r.stderr.includes(`setup: ${s.note}`), `a note saying what is installed; stderr:\n${r.stderr}`);
  });

  test(`${s.name}: already installed → nothing installed, nothing said`, (t) => {
    const m = machine(t, { have: ALL });
    const r = m.step(s.step);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /went on/);
    assert.doesNotMatch(m.log(), /install|add|ci|update/);
    assert.doesNotMatch(r.stderr, /setup:/);
  });

  test(`${s.name}: the install fails → a named, non-zero failure with the fix`, (t) => {
    const m = machine(t, { have: s.have });
    const r = m.step(s.step, { STANDIN_FAIL: s.fail });
    assert.notEqual(r.status, 0);
    assert.doesNotMatch(r.stdout, /went on/);
    assert.match(r.stderr, /setup: .+ failed\nsetup: fix: .+/);
  });
}

test("ensure_chromium reads the package lists first (a fresh Debian has none)", (t) => {
  const m = machine(t);
  const r = m.step("ensure_chromium");
  assert.equal(r.status, 0, r.stderr);
  assert.match(m.log(), /^apt-get update -qq\napt-get install /);
});

test("ensure_chromium: a failed apt-get update is named", (t) => {
  const m = machine(t);
  const r = m.step("ensure_chromium", { STANDIN_FAIL: "apt-update" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /setup: Chromium failed\nsetup: fix: .*apt-get update/);
});

test("ensure_chromium: not root and no sudo → a named failure saying what to run as root", (t) => {
  const m = machine(t);
  const r = m.step("ensure_chromium", { STANDIN_UID: "1000" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /setup: Chromium failed\nsetup: fix: as root: apt-get update && apt-get install/);
  assert.equal(m.log(), "");
});

test("ensure_wasm_bindgen: a CLI of another version is replaced by the pinned one", (t) => {
  const m = machine(t);
  writeFileSync(join(m.bin, "wasm-bindgen"), sh('echo "wasm-bindgen 0.2.99"'));
  chmodSync(join(m.bin, "wasm-bindgen"), 0o755);
  const r = m.step("ensure_wasm_bindgen");
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`installing wasm-bindgen-cli ${WANT.replaceAll(".", "\\.")} \\(found: 0\\.2\\.99\\)`));
});

test("ensure_wasm_bindgen: installed but still not the one on PATH → named, with the fix", (t) => {
  const m = machine(t);
  // cargo "installs" somewhere the PATH does not reach: the old CLI still answers.
  writeFileSync(join(m.bin, "cargo"), sh(LOG));
  writeFileSync(join(m.bin, "wasm-bindgen"), sh('echo "wasm-bindgen 0.2.99"'));
  chmodSync(join(m.bin, "wasm-bindgen"), 0o755);
  const r = m.step("ensure_wasm_bindgen");
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /fix: installed, but 'wasm-bindgen --version' says 'wasm-bindgen 0\.2\.99': put ~\/\.cargo\/bin first on PATH/);
});

/** Puts a stand-in of `name` answering `--version` with `version` on the machine's PATH. */
function putTool(m, name, version) {
  writeFileSync(join(m.bin, name), sh(`echo "${name} ${version}"`));
  chmodSync(join(m.bin, name), 0o755);
}

test("ensure_wasm_bindgen_test_runner: the CLI of the pinned version without its runner → installed again, forced", (t) => {
  const m = machine(t, { have: ALL });
  rmSync(join(m.bin, "wasm-bindgen-test-runner"));
  const r = m.step("ensure_wasm_bindgen_test_runner");
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /went on/);
  assert.match(m.log(), new RegExp(`^cargo install --force wasm-bindgen-cli --version ${WANT.replaceAll(".", "\\.")}\n$`));
  assert.match(r.stderr, /\(found: none\)/);
  assert.ok(existsSync(join(m.bin, "wasm-bindgen-test-runner")), "the runner is there now");
});

test("ensure_wasm_bindgen_test_runner: a runner of another version is replaced by the pinned one", (t) => {
  const m = machine(t, { have: ALL });
  putTool(m, "wasm-bindgen-test-runner", "0.2.99");
  const r = m.step("ensure_wasm_bindgen_test_runner");
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`installing wasm-bindgen-cli ${WANT.replaceAll(".", "\\.")} for its wasm-bindgen-test-runner \\(found: 0\\.2\\.99\\)`));
});

test("ensure_wasm_bindgen_test_runner: installed but still not the one on PATH → named, with the fix", (t) => {
  const m = machine(t);
  writeFileSync(join(m.bin, "cargo"), sh(LOG));
  putTool(m, "wasm-bindgen-test-runner", "0.2.99");
  const r = m.step("ensure_wasm_bindgen_test_runner");
  assert.notEqual(r.status, 0);
  assert.doesNotMatch(r.stdout, /went on/);
  assert.match(r.stderr, /setup: wasm-bindgen-test-runner .+ failed\nsetup: fix: installed, but 'wasm-bindgen-test-runner --version' says 'wasm-bindgen-test-runner 0\.2\.99': put ~\/\.cargo\/bin first on PATH/);
});

test("ensure_chromium: Chromium without ChromeDriver → both installed (the wasm tests and the browser tests need the driver)", (t) => {
  const m = machine(t);
  putTool(m, "chromium", "156.0");
  const r = m.step("ensure_chromium");
  assert.equal(r.status, 0, r.stderr);
  assert.match(m.log(), /apt-get install .*chromium-driver/);
  assert.ok(existsSync(join(m.bin, "chromedriver")), "chromedriver on PATH now");
});

test("ensure_chromium: ChromeDriver and Chromium present → nothing installed", (t) => {
  const m = machine(t);
  putTool(m, "chromium", "156.0");
  putTool(m, "chromedriver", "156.0");
  const r = m.step("ensure_chromium");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(m.log(), "");
});

test("ensure_node: Node.js missing or too old → named failures", (t) => {
  const missing = machine(t, { omit: ["node"] }).step("ensure_node");
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /setup: Node\.js failed\nsetup: fix: install Node\.js 20 or later/);
  const old = machine(t).step("ensure_node", { STANDIN_NODE_VERSION: "v18.19.0" });
  assert.notEqual(old.status, 0);
  assert.match(old.stderr, /found Node\.js '18\.19\.0'; install Node\.js 20 or later/);
});

test("ensure_rust: no rustup → named failure", (t) => {
  const r = machine(t, { omit: ["rustup"] }).step("ensure_rust");
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /setup: Rust toolchain failed\nsetup: fix: install Rust with rustup/);
});

test("ensure_npm: runs again only when package-lock.json changed", (t) => {
  const m = machine(t, { have: ALL });
  assert.equal(m.step("ensure_npm").status, 0);
  assert.equal(m.log(), "");
  writeFileSync(join(m.root, "pkg-scripts", "package-lock.json"), '{"lockfileVersion": 3, "changed": true}\n');
  const r = m.step("ensure_npm");
  assert.equal(r.status, 0, r.stderr);
  assert.match(m.log(), /^npm ci /);
  assert.ok(existsSync(join(m.root, "node_modules")), "node_modules linked at the root for tests/");
});

// ----- the scripts themselves, on a bare machine ------------------------------------------

/** Every install a bare machine needs, in the order the scripts make them. */
const BARE_INSTALLS = [`rustup toolchain install ${TOOLCHAIN}`, "rustup component add", "rustup target add", `cargo install wasm-bindgen-cli --version ${WANT}`, "npm ci"];

function assertInstalledThen(log, then) {
  let at = -1;
  for (const step of [...BARE_INSTALLS, ...then]) {
    const i = log.indexOf(step, at + 1);
    assert.ok(i > at, `"${step}" after the previous step; log:\n${log}`);
    at = i;
  }
}

for (const [script, args, then, made = []] of [
  ["build", [], ["cargo build --profile wasm", "wasm-bindgen --target web", "wasm-opt -O3"], ["www/vendor/repute/pkg/repute_bg.wasm", "www/vendor/repute/web.js", "www/vendor/repute/lib/pool-args.js", "www/vendor/repute/lib/pool-events.js", "www/vendor/repute/lib/mulberry32.js", "www/vendor/repute/lib/vocabulary.js", "www/vendor/uplot/uPlot.esm.js"]],
  ["start", ["--port", "1"], ["cargo build", "wasm-opt", "bin/repute.js serve --port 1"]],
  ["perf/bench", ["1000"], ["cargo build --profile wasm", "cargo build --quiet --release --example cycle_rate",
    "cargo build --quiet --release --locked --target wasm32-unknown-unknown --manifest-path", "wasm-opt -O3", "bench.mjs 1000"]],
  ["perf/bench-edge", [], ["cargo build --profile wasm", "wasm-opt -O3", "bench-edge.mjs"]],
  ["perf/load", ["--duration", "1"], ["cargo build", "load.mjs --duration 1"]],
  ["perf/profile", ["1000"], ["cargo build", "wasm-bindgen --target web --keep-debug", "wasm-opt -O3", "profile.mjs"]],
  ["prepack", [], ["cargo build --profile wasm", "wasm-bindgen --target web", "wasm-opt -O3"],
    ["pkg-scripts/pkg/repute_bg.wasm", "pkg-scripts/LICENSE", "pkg-scripts/README.md", "pkg-scripts/repute.config.schema.json", "pkg-scripts/repute.config.json", "pkg-scripts/www/index.html", "pkg-scripts/www/vendor/repute/pkg/repute_bg.wasm"]],
]) {
  test(`pkg-scripts/${script} on a bare machine installs what it needs, then does its job`, (t) => {
    const m = machine(t);
    const r = m.script(script, args);
    assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}`);
    assertInstalledThen(m.log(), then);
    for (const f of made) assert.ok(existsSync(join(m.root, f)), `${f} made`);
  });
}

test("pkg-scripts/test on a bare machine installs everything (Chromium too), then runs every step", (t) => {
  const m = machine(t);
  const r = m.script("test");
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const wasmTests = "cargo test --locked --target wasm32-unknown-unknown --test wasm_facade --test wasm_text_args";
  assertInstalledThen(m.log(), ["apt-get update", "apt-get install", "cargo fmt --check", "cargo clippy",
    "cargo clippy --locked --target wasm32-unknown-unknown --all-targets", "cargo test",
    `${wasmTests}\n`, `${wasmTests} (browser, CHROMEDRIVER=${join(m.bin, "chromedriver")})\n`,
    "cargo build --profile wasm", "tsc -p", "node --test tests/js/"]);
  assert.doesNotMatch(m.log(), /cargo install --force/, "one install of wasm-bindgen-cli gave both binaries");
  assert.match(r.stdout, /== all tests passed/);
  assert.match(r.stderr, new RegExp(`setup: installing wasm-bindgen-cli ${WANT.replaceAll(".", "\\.")} \\(found: none\\) — first run only, about 2 minutes`));
});

test("pkg-scripts/test: a failed install stops the run with the step named", (t) => {
  const m = machine(t);
  const r = m.script("test", [], { STANDIN_FAIL: "cargo-install" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`setup: wasm-bindgen-cli ${WANT.replaceAll(".", "\\.")} failed\\nsetup: fix: cargo install wasm-bindgen-cli`));
  assert.doesNotMatch(m.log(), /cargo fmt/);
});

test("pkg-scripts/test: no ChromeDriver and no way to install it → a named failure before any test", (t) => {
  const m = machine(t, { have: ["toolchain", "components", "target", "wasm-bindgen", "npm"] });
  const r = m.script("test", [], { STANDIN_UID: "1000" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /setup: Chromium failed\nsetup: fix: as root: apt-get update && apt-get install -y chromium chromium-driver/);
  assert.doesNotMatch(m.log(), /cargo test/);
});

test("pkg-scripts/prepack: a build that cannot install what it needs → no package, the reason named, nothing copied", (t) => {
  const m = machine(t);
  const r = m.script("prepack", [], { STANDIN_FAIL: "cargo-install" });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /setup: wasm-bindgen-cli .+ failed\nsetup: fix: cargo install wasm-bindgen-cli/);
  assert.match(r.stderr, /prepack: the engine could not be built \(see above\); no package was made/);
  for (const f of ["LICENSE", "README.md", "repute.config.schema.json", "repute.config.json", "www"]) assert.ok(!existsSync(join(m.root, "pkg-scripts", f)), `${f} not copied`);
  assert.equal(m.script("prepack", ["--clean"]).status, 0, "postpack on nothing is fine");
});

test("pkg-scripts/build when up to date skips wasm-bindgen and wasm-opt; a changed module rebuilds", (t) => {
  const m = machine(t);
  assert.equal(m.script("build").status, 0);
  const again = m.script("build");
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /package up to date/);
  assert.doesNotMatch(m.log().split("cargo build").at(-1), /wasm-bindgen|wasm-opt/, "nothing after the second cargo build");
  // cargo produced a different module: the package is made again.
  const cargo = join(m.bin, "cargo");
  writeFileSync(cargo, readFileSync(cargo, "utf8").replace("echo wasm > target/", "echo changed-wasm > target/"));
  const changed = m.script("build");
  assert.equal(changed.status, 0, changed.stderr);
  assert.doesNotMatch(changed.stdout, /package up to date/);
  assert.match(m.log().split("cargo build").at(-1), /wasm-bindgen --target web[\s\S]*wasm-opt -O3/);
});
