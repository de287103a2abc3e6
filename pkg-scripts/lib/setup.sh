# Shared by pkg-scripts/build, test, start, bench, load and profile: installs what the project
# needs, idempotently, and is quick when everything is already there. Source it; it defines
# functions only.
#
# Every step either finds its tool, installs it with one line saying what and why, or stops with
# a message naming the step and the fix (`setup_fail`): never a silent exit. The callers run
# under `set -euo pipefail`, so nothing here may put a command that can fail inside `$(…)`, or
# at the head of a pipeline whose reader exits early (`grep -q`): read a tool's output into a
# variable with `|| true`, then look at the variable (`grep -q … <<<"$var"` has no writer).
# tests/setup/ runs every step against stand-in tools on a PATH where the real ones are absent.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

setup_note() { printf 'setup: %s\n' "$*" >&2; }

# Stops the calling script: which step failed and what to do about it.
setup_fail() {
  printf 'setup: %s failed\nsetup: fix: %s\n' "$1" "$2" >&2
  exit 1
}

# Node.js 20 or later, which every script and test runs on (nothing here installs it).
ensure_node() {
  local version
  command -v node >/dev/null 2>&1 \
    || setup_fail "Node.js" "install Node.js 20 or later (Debian: apt-get install nodejs npm), then run this again"
  version=$(node --version 2>/dev/null || true)
  version=${version#v}
  [ "${version%%.*}" -ge 20 ] 2>/dev/null \
    || setup_fail "Node.js" "found Node.js '${version:-unknown}'; install Node.js 20 or later"
  command -v npm >/dev/null 2>&1 \
    || setup_fail "npm" "install npm (Debian: apt-get install npm), then run this again"
}

# The toolchain named in rust-toolchain.toml, with the wasm target and lint components.
ensure_rust() {
  local toolchain have
  command -v rustup >/dev/null 2>&1 && command -v cargo >/dev/null 2>&1 \
    || setup_fail "Rust toolchain" "install Rust with rustup (https://rustup.rs), then run this again"
  toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml" 2>/dev/null || true)
  [ -n "$toolchain" ] || setup_fail "Rust toolchain" "rust-toolchain.toml names no channel"
  have=$(rustup toolchain list 2>/dev/null || true)
  if ! grep -q "^$toolchain-" <<<"$have"; then
    setup_note "installing Rust $toolchain (named in rust-toolchain.toml) — first run only, about a minute"
    rustup toolchain install "$toolchain" --profile minimal >&2 \
      || setup_fail "Rust $toolchain" "rustup toolchain install $toolchain (needs the network)"
  fi
  have=$(rustup component list --toolchain "$toolchain" --installed 2>/dev/null || true)
  if ! grep -q '^rustfmt' <<<"$have" || ! grep -q '^clippy' <<<"$have"; then
    setup_note "installing rustfmt and clippy for Rust $toolchain — first run only"
    rustup component add --toolchain "$toolchain" rustfmt clippy >&2 \
      || setup_fail "rustfmt and clippy" "rustup component add --toolchain $toolchain rustfmt clippy"
  fi
  have=$(rustup target list --toolchain "$toolchain" --installed 2>/dev/null || true)
  if ! grep -qx wasm32-unknown-unknown <<<"$have"; then
    setup_note "installing the Rust target wasm32-unknown-unknown (the engine's WebAssembly build) — first run only"
    rustup target add --toolchain "$toolchain" wasm32-unknown-unknown >&2 \
      || setup_fail "Rust target wasm32-unknown-unknown" "rustup target add --toolchain $toolchain wasm32-unknown-unknown"
  fi
}

# The version of the wasm-bindgen crate that Cargo.lock pins (Cargo.toml pins it with `=`).
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' "$root/Cargo.lock"
}

# The wasm-bindgen CLI of exactly that version: the CLI and the crate must match.
ensure_wasm_bindgen() {
  local want have
  want=$(wasm_bindgen_version 2>/dev/null || true)
  [ -n "$want" ] || setup_fail "wasm-bindgen CLI" "Cargo.lock names no wasm-bindgen crate; run cargo generate-lockfile"
  have=$(wasm-bindgen --version 2>/dev/null || true) # "wasm-bindgen 0.2.130", or nothing
  have=${have#wasm-bindgen }
  have=${have%% *}
  if [ "$have" != "$want" ]; then
    setup_note "installing wasm-bindgen-cli $want (found: ${have:-none}) — first run only, about 2 minutes"
    # Not --locked: the locked build needs a crate version the registry mirror lacks.
    cargo install wasm-bindgen-cli --version "$want" >&2 \
      || setup_fail "wasm-bindgen-cli $want" "cargo install wasm-bindgen-cli --version $want (needs the network and a C linker)"
    have=$(wasm-bindgen --version 2>/dev/null || true)
    [ "$have" = "wasm-bindgen $want" ] \
      || setup_fail "wasm-bindgen-cli $want" "installed, but 'wasm-bindgen --version' says '${have:-nothing}': put ~/.cargo/bin first on PATH"
  fi
}

# wasm-bindgen-test-runner of that same version, which runs the facade's own tests in wasm32
# (tests/wasm_facade.rs; .cargo/config.toml names it as cargo's wasm32 runner). It comes with
# wasm-bindgen-cli: an install that lacks it, or has another version, is made again (--force:
# cargo would otherwise take the CLI of that version for installed already).
ensure_wasm_bindgen_test_runner() {
  local want have
  want=$(wasm_bindgen_version 2>/dev/null || true)
  [ -n "$want" ] || setup_fail "wasm-bindgen-test-runner" "Cargo.lock names no wasm-bindgen crate; run cargo generate-lockfile"
  have=$(wasm-bindgen-test-runner --version 2>/dev/null || true) # "wasm-bindgen-test-runner 0.2.130", or nothing
  have=${have#wasm-bindgen-test-runner }
  have=${have%% *}
  if [ "$have" != "$want" ]; then
    setup_note "installing wasm-bindgen-cli $want for its wasm-bindgen-test-runner (found: ${have:-none}) — first run only, about 2 minutes"
    cargo install --force wasm-bindgen-cli --version "$want" >&2 \
      || setup_fail "wasm-bindgen-test-runner $want" "cargo install --force wasm-bindgen-cli --version $want (needs the network and a C linker)"
    have=$(wasm-bindgen-test-runner --version 2>/dev/null || true)
    [ "$have" = "wasm-bindgen-test-runner $want" ] \
      || setup_fail "wasm-bindgen-test-runner $want" "installed, but 'wasm-bindgen-test-runner --version' says '${have:-nothing}': put ~/.cargo/bin first on PATH"
  fi
}

# npm packages of pkg-scripts, reinstalled only when package-lock.json changed.
ensure_npm() {
  local dir="$root/pkg-scripts" stamp
  ensure_node
  stamp=$(sha256sum "$dir/package-lock.json" 2>/dev/null || true)
  stamp=${stamp%% *}
  [ -n "$stamp" ] || setup_fail "npm packages" "pkg-scripts/package-lock.json is missing: restore it from git"
  if [ ! -f "$dir/node_modules/.repute-lock" ] || [ "$(cat "$dir/node_modules/.repute-lock")" != "$stamp" ]; then
    setup_note "installing the npm packages of pkg-scripts (package-lock.json changed or first run) — about a minute"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) \
      || setup_fail "npm packages" "cd pkg-scripts && npm ci (needs the npm registry)"
    echo "$stamp" > "$dir/node_modules/.repute-lock"
  fi
  # Tests under tests/ import the package by name and its dev tools: link both into reach.
  ln -sfn .. "$dir/node_modules/repute"
  [ -e "$root/node_modules" ] || ln -s pkg-scripts/node_modules "$root/node_modules"
}

# Debian's Chromium and ChromeDriver (never a downloaded browser), for the browser tests.
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 \
      || setup_fail "Chromium" "as root: apt-get update && apt-get install -y chromium chromium-driver"
    sudo="sudo"
  fi
  command -v apt-get >/dev/null 2>&1 \
    || setup_fail "Chromium" "install Chromium and ChromeDriver so that 'chromium' and 'chromedriver' are on PATH"
  setup_note "installing Debian's chromium and chromium-driver (the browser tests) — first run only, about a minute"
  # A fresh machine has no package lists yet: read them first, always.
  $sudo apt-get update -qq >&2 \
    || setup_fail "Chromium" "$sudo apt-get update failed: check the machine's Debian mirrors"
  $sudo apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2 \
    || setup_fail "Chromium" "$sudo apt-get install -y chromium chromium-driver"
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 \
    || setup_fail "Chromium" "installed, but 'chromium' or 'chromedriver' is not on PATH"
}

# wasm-opt from the npm binaryen package (Debian's is too old to read current output), at -O3,
# told the features rustc enables by default for wasm32-unknown-unknown. Arguments: input,
# -o output, and any more flags.
wasm_opt() {
  "$root/pkg-scripts/node_modules/.bin/wasm-opt" -O3 \
    --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
    --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue "$@"
}
