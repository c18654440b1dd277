#!/usr/bin/env bash
# Runs before `npm start` (npm's prestart): makes .env (the master key and other secrets generated once),
# builds the gateway and the console, and prints what a person needs to call them.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/dev-prepare.sh [--no-build] [--help]

Prepares running the gateway from the checkout (npm start runs it first):
  1. .env at the repository root from .env.example: values already set are kept, secrets left as
     replace-me are generated (GATEWAY_MASTER_KEY among them)
  2. npm run build -w services/gateway and -w services/console (with --no-build only the console's
     web bundle, and only when it is missing)
  3. prints the gateway's and the console's URLs, where the master key is, which database is used
     and the model config the gateway loads (GATEWAY_CONFIG, else litellm/config.yaml)

Options:
  --no-build   skip the builds (npm run dev runs from source)
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
  echo "building the gateway and the console (npm run build -w services/gateway, -w services/console) …"
  npm run --silent build -w services/gateway
  npm run --silent build -w services/console >/dev/null
elif [[ ! -f services/console/dist/web/index.html ]]; then
  echo "building the console's web bundle (npm run build:web -w services/console) …"
  npm run --silent build:web -w services/console >/dev/null
fi
# The URLs, the master key, the database and the model config in use (GATEWAY_CONFIG, else litellm/config.yaml).
npx --no-install tsx scripts/lib/start-banner.ts
