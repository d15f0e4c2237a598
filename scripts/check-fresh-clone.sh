#!/usr/bin/env bash
# The README's quick start, from a fresh clone, on a machine whose system browser is out of reach:
# proves that its two commands pass with nothing installed beyond Node and npm (the webview tier
# must then use the Chromium that `npm ci` brings, test/helpers/chromium.ts).
#
#   bash scripts/check-fresh-clone.sh [repository]     (default: this checkout; CI runs it)
#
# 1. Reads the two commands from README.md's "Quick start" (the ```sh block) and runs them as
#    written, one after the other; fails if either fails.
# 2. Clones the repository's committed HEAD (not the working tree) into an empty temp folder.
# 3. Runs them with an empty environment except: HOME (a new empty folder), PATH (a folder holding
#    only node, npm, npx, and the base system's sh and tar), LANG, CI, the caller's npm cache
#    folder (so packages are not downloaded again; the registry is still asked), CANOPY_CHROMIUM
#    empty and CANOPY_CHROMIUM_SOURCE=npm, so the browser lookup skips every system browser.
# 4. As root, where `unshare` can make a private mount namespace, Debian's chromium folder and the
#    NSS/NSPR libraries (which only a browser package brings) are hidden too, so the npm Chromium
#    proves it needs none of them. Elsewhere that step is skipped, and said.
# Prints each command's time, the installed size, and the load average; removes the clone unless
# CANOPY_FRESH_KEEP=1. Takes about as long as `npm ci` + `npm run demo` + `npm test`.
set -euo pipefail

if [[ "${1:-}" == "--inside" ]]; then
  # Second stage, inside the private mount namespace (or not): hide, then run the commands.
  work="$2"
  shift 2
  if [[ "${CANOPY_FRESH_HIDE:-0}" == "1" ]]; then
    hidden=()
    for dir in /usr/lib/chromium /usr/lib/chromium-browser /opt/google /opt/microsoft; do
      if [[ -d "$dir" ]]; then mount -t tmpfs -o ro,size=1m none "$dir" && hidden+=("$dir"); fi
    done
    # Bound over with /dev/null: anything that still loads one of these fails loudly.
    while IFS= read -r lib; do
      if [[ -f "$lib" && ! -L "$lib" ]]; then mount --bind /dev/null "$lib" && hidden+=("$lib"); fi
    done < <(dpkg -L libnss3 libnspr4 2>/dev/null | grep -E '\.so(\.[0-9]+)*$' || true)
    echo "hidden in a private mount namespace: ${#hidden[@]} paths (${hidden[*]:0:4} …)"
  fi
  status=0
  i=0
  for command in "$@"; do
    i=$((i + 1))
    echo
    echo "=== fresh clone, command $i of $#: $command"
    started=$SECONDS
    if (cd "$work/canopy" && env -i HOME="$work/home" PATH="$work/bin" LANG=C.UTF-8 CI="${CI:-}" \
      npm_config_cache="$CANOPY_FRESH_NPM_CACHE" CANOPY_CHROMIUM= CANOPY_CHROMIUM_SOURCE=npm \
      "$BASH" -c "$command"); then
      echo "=== command $i passed in $((SECONDS - started)) s"
    else
      rc=$?
      echo "=== command $i FAILED (exit $rc) after $((SECONDS - started)) s"
      status=1
      break
    fi
  done
  exit "$status"
fi

src="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
readme="$src/README.md"
mapfile -t commands < <(awk '/^## Quick start/ { q = 1 } q && /^```sh/ { b = 1; next } b && /^```/ { exit } b && NF { print }' "$readme")
if ((${#commands[@]} != 2)); then
  echo "expected two commands in the Quick start of $readme, found ${#commands[@]}" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/canopy-fresh-XXXXXX")"
cleanup() { if [[ "${CANOPY_FRESH_KEEP:-0}" == "1" ]]; then echo "kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

git clone --quiet --no-hardlinks "$src" "$work/canopy"
echo "fresh clone of $src at $(git -C "$work/canopy" log -1 --format='%h %s') in $work/canopy"
mkdir -p "$work/home" "$work/bin"
for tool in node npm npx sh tar; do
  path="$(command -v "$tool")" || { echo "$tool is not on PATH" >&2; exit 1; }
  ln -s "$path" "$work/bin/$tool"
done
echo "node $(node --version), npm $(npm --version); PATH holds only: $(ls "$work/bin" | tr '\n' ' ')"
CANOPY_FRESH_NPM_CACHE="$(npm config get cache)"
export CANOPY_FRESH_NPM_CACHE

self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
if [[ "$(id -u)" == "0" ]] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  CANOPY_FRESH_HIDE=1 unshare -m --propagation private bash "$self" --inside "$work" "${commands[@]}" && status=0 || status=$?
else
  echo "not root or no unshare: Debian's chromium and NSS libraries stay visible (the lookup still skips system browsers)"
  bash "$self" --inside "$work" "${commands[@]}" && status=0 || status=$?
fi

echo
if [[ -d "$work/canopy/node_modules" ]]; then
  echo "installed: node_modules $(du -sm "$work/canopy/node_modules" | cut -f1) MB (of which the unpacked npm Chromium $(du -sm "$work/canopy/node_modules/.cache/canopy-chromium" 2>/dev/null | cut -f1 || echo 0) MB); whole clone $(du -sm "$work/canopy" | cut -f1) MB"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if ((status == 0)); then
  echo "fresh clone: both Quick start commands passed"
else
  echo "fresh clone: FAILED"
fi
exit "$status"
