# Shared by pkg-scripts/build, test and start: installs what the project needs, idempotently,
# and is quick when everything is already there. Source it; it defines functions only.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The toolchain named in rust-toolchain.toml, with the wasm target and lint components.
ensure_rust() {
  local toolchain
  toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")
  rustup component add --toolchain "$toolchain" rustfmt clippy >/dev/null 2>&1 || true
  rustup target list --toolchain "$toolchain" --installed | grep -qx wasm32-unknown-unknown \
    || rustup target add --toolchain "$toolchain" wasm32-unknown-unknown
}

# The wasm-bindgen CLI of exactly the version Cargo.lock pins for the wasm-bindgen crate.
ensure_wasm_bindgen() {
  local want have
  want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' "$root/Cargo.lock")
  have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }')
  if [ "$have" != "$want" ]; then
    echo "installing wasm-bindgen-cli $want (found: ${have:-none}); this takes a few minutes" >&2
    cargo install wasm-bindgen-cli --version "$want"
  fi
}

# npm packages of pkg-scripts, reinstalled only when package-lock.json changed.
ensure_npm() {
  local dir="$root/pkg-scripts" stamp
  stamp=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ ! -f "$dir/node_modules/.repute-lock" ] || [ "$(cat "$dir/node_modules/.repute-lock")" != "$stamp" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$stamp" > "$dir/node_modules/.repute-lock"
  fi
  # Tests under tests/ import the package by name and its dev tools: link both into reach.
  ln -sfn .. "$dir/node_modules/repute"
  [ -e "$root/node_modules" ] || ln -s pkg-scripts/node_modules "$root/node_modules"
}

# Debian's Chromium and ChromeDriver (never a downloaded browser).
ensure_chromium() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null \
      || { $sudo apt-get update >/dev/null && $sudo apt-get install -y --no-install-recommends chromium chromium-driver >/dev/null; }
  fi
}

# wasm-opt from the npm binaryen package (Debian's is too old to read current output), at -O3,
# told the features rustc enables by default for wasm32-unknown-unknown. Arguments: input,
# -o output, and any more flags.
wasm_opt() {
  "$root/pkg-scripts/node_modules/.bin/wasm-opt" -O3 \
    --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
    --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue "$@"
}
