#!/usr/bin/env bash
# Runs before `npm start` (npm's prestart): makes .env (the master key and other secrets generated once),
# builds the gateway, and prints what a person needs to call it.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/dev-prepare.sh [--no-build] [--help]

Prepares running the gateway from the checkout (npm start runs it first):
  1. .env at the repository root from .env.example: values already set are kept, secrets left as
     replace-me are generated (GATEWAY_MASTER_KEY among them)
  2. npm run build -w services/gateway (skipped with --no-build)
  3. prints the gateway's URL and where its master key is

Options:
  --no-build   skip the build (npm run dev runs from source)
  -h, --help   show this help
USAGE
}

build=1
for arg in "$@"; do
  case "$arg" in
    -h | --help) usage; exit 0 ;;
    --no-build) build=0 ;;
    *) echo "dev-prepare: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
npx --no-install tsx scripts/lib/env-file.ts
if ((build)); then
  npm run --silent build -w services/gateway
fi
port="${PORT:-$(sed -n 's/^PORT=\(.*\)$/\1/p' .env | tail -1)}"
port="${port:-4000}"
cat <<INFO

  gateway     http://localhost:$port   (OpenAI base URL: http://localhost:$port/v1)
  master key  GATEWAY_MASTER_KEY in $root/.env
              load it into your shell:  export "\$(grep '^GATEWAY_MASTER_KEY=' .env)"
  try         curl -s localhost:$port/v1/models -H "Authorization: Bearer \$GATEWAY_MASTER_KEY"
  models      litellm/config.yaml; register one with ./scripts/add-model.sh --help

INFO
