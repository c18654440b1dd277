#!/usr/bin/env bash
# Registers a model in litellm/config.yaml for one backend (local-runner, cloud, remote, mock-npu), keeping the
# file's comments and checking the result with the gateway's own config loader before writing it.
# The work is done by scripts/lib/add-model.ts; run with --help for the options.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ ! -x node_modules/.bin/tsx ]]; then
  echo "add-model: run 'npm ci' in $root first (it needs the gateway's config loader and tsx)" >&2
  exit 1
fi
exec node_modules/.bin/tsx scripts/lib/add-model.ts "$@"
