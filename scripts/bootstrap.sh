#!/usr/bin/env bash
# Brings the whole platform up with Pulumi on this machine (stack local) or a VM (stack vm), registers a
# model, runs the smoke test and prints the URLs and logins. Safe to run again: every step keeps what is
# already there, and a second run with nothing changed is a `pulumi up` with no changes.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/bootstrap.sh [options]

Steps: check the tools; make .env (secrets generated once); log Pulumi in to a state folder in the checkout
(.pulumi/, no cloud account) with a passphrase file made once; select or create the stack; register the model;
pulumi up; wait up to 5 minutes for the gateway; run the smoke test; print the URLs and logins.

Options:
  --backend <b>        local-runner  a model served by a local model runner (with --model)
                       cloud         a cloud provider's model (with --model; key in .env: OPENAI_API_KEY, ...)
                       remote        any OpenAI-compatible server (with --model and --api-base)
                       mock-npu      clone a registered model tagged npu
                       skip          start the stack only; register a model later (scripts/add-model.sh)
  --model <name>       model to register
  --api-base <url>     server URL for --backend remote (or a local runner other than Docker Model Runner)
  --provider <name>    cloud provider for --backend cloud: openai (default) or anthropic
  --domain <host>      public domain (rewrites the public URLs: chat.<host>, gateway.<host>, ...)
  --stack <name>       local (default: this machine's Docker) or vm (a VM over SSH; Pulumi.vm.yaml)
  --skip-pull          do not download the model (local-runner)
  --skip-smoke-test    do not run scripts/smoke-test.sh at the end
  --yes                ask nothing (also when stdin is not a terminal); missing answers take the defaults
  -h, --help           show this help

Without --backend it asks on a terminal, and uses skip otherwise.
USAGE
}

die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }
step() { printf '\n==> %s\n' "$*"; }

backend="" model="" api_base="" provider="" domain="" stack="local" skip_pull=0 skip_smoke=0 yes=0
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --backend | --model | --api-base | --provider | --domain | --stack)
      [[ $# -ge 2 && -n "$2" ]] || { echo "bootstrap: $1 needs a value (see --help)" >&2; exit 2; }
      case "$1" in
        --backend) backend="$2" ;;
        --model) model="$2" ;;
        --api-base) api_base="$2" ;;
        --provider) provider="$2" ;;
        --domain) domain="$2" ;;
        --stack) stack="$2" ;;
      esac
      shift 2 ;;
    --skip-pull) skip_pull=1; shift ;;
    --skip-smoke-test) skip_smoke=1; shift ;;
    --yes | -y) yes=1; shift ;;
    *) echo "bootstrap: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

case "$stack" in local | vm) ;; *) echo "bootstrap: --stack must be local or vm" >&2; exit 2 ;; esac
case "$backend" in "" | local-runner | cloud | remote | mock-npu | skip) ;;
  *) echo "bootstrap: --backend must be local-runner, cloud, remote, mock-npu or skip" >&2; exit 2 ;;
esac

scripts="$(cd "$(dirname "$0")" && pwd)"
# The platform root: Pulumi.yaml, .env, litellm/config.yaml (PLATFORM_ROOT overrides it, e.g. for tests).
root="${PLATFORM_ROOT:-$(dirname "$scripts")}"
repo="$(dirname "$scripts")"
tsx="$repo/node_modules/.bin/tsx"

interactive=0
if ((yes == 0)) && [[ -t 0 && -t 1 ]]; then interactive=1; fi
ask() { # ask <prompt> <default>: the answer, or the default when not interactive or left empty
  local answer=""
  if ((interactive)); then read -r -p "$1 [$2]: " answer || true; fi
  printf '%s' "${answer:-$2}"
}

if [[ -z "$backend" ]]; then
  if ((interactive)); then
    echo "Which model backend? local-runner, cloud, remote, mock-npu, or skip (register one later)."
    backend="$(ask "backend" skip)"
    case "$backend" in local-runner | cloud | remote | mock-npu | skip) ;; *) die "unknown backend $backend" ;; esac
  else
    backend=skip
  fi
fi
if [[ "$backend" == local-runner || "$backend" == cloud || "$backend" == remote ]] && [[ -z "$model" ]]; then
  ((interactive)) || die "--backend $backend needs --model <model_name>"
  model="$(ask "model name" "")"
  [[ -n "$model" ]] || die "--backend $backend needs a model name"
fi
if [[ "$backend" == remote && -z "$api_base" ]]; then
  ((interactive)) || die "--backend remote needs --api-base <url of the server's /v1>"
  api_base="$(ask "server URL (its /v1)" "")"
  [[ -n "$api_base" ]] || die "--backend remote needs a server URL"
fi

# --- 1. tools ------------------------------------------------------------------------------------------------
step "checking tools"
missing=0
need() { # need <program> <how to install>
  if command -v "$1" >/dev/null 2>&1; then printf '  %-8s %s\n' "$1" "$(command -v "$1")"
  else printf '  %-8s MISSING: %s\n' "$1" "$2"; missing=1; fi
}
need pulumi "curl -fsSL https://get.pulumi.com | sh   (then open a new shell; https://www.pulumi.com/docs/install/)"
need docker "apt-get install docker.io, or Docker Engine: https://docs.docker.com/engine/install/"
need node "Node.js 24 or newer: https://nodejs.org/en/download, or scripts/ci-node.sh (from npm)"
need openssl "apt-get install openssl"
need curl "apt-get install curl"
if [[ "$stack" == vm ]]; then need ssh "apt-get install openssh-client"; fi
((missing == 0)) || die "install the missing tools above, then run this again"
if [[ "$stack" == local ]] && ! docker info >/dev/null 2>&1; then
  die "the Docker daemon does not answer (docker info failed): start it (sudo systemctl start docker) or set DOCKER_HOST"
fi
if [[ ! -x "$tsx" ]]; then
  step "npm ci (the Pulumi program's and the scripts' dependencies)"
  (cd "$repo" && npm ci --no-audit --no-fund)
fi

# --- 2. .env -------------------------------------------------------------------------------------------------
step ".env"
"$tsx" "$scripts/lib/env-file.ts" --env "$root/.env" --example "$root/.env.example"

# --- 3. Pulumi state and stack -------------------------------------------------------------------------------
step "Pulumi state in $root/.pulumi (file backend) and stack $stack"
# shellcheck source=scripts/lib/pulumi-state.sh
. "$scripts/lib/pulumi-state.sh"
use_pulumi_state "$root" 1
cd "$root"
pulumi login "$PULUMI_BACKEND_URL"
if ! pulumi stack select "$stack" 2>/dev/null; then
  pulumi stack init "$stack"
fi
if [[ -n "$domain" ]]; then
  pulumi config set --stack "$stack" platform:domain "$domain"
fi

# --- 4. model ------------------------------------------------------------------------------------------------
# Registered before `pulumi up`: litellm/config.yaml is baked into the gateway image that up builds.
step "model (backend $backend)"
if [[ "$backend" == skip ]]; then
  echo "no model registered now; later: scripts/add-model.sh --help, then pulumi up"
else
  if [[ "$backend" == local-runner && $skip_pull -eq 0 ]]; then
    if docker model version >/dev/null 2>&1; then
      docker model pull "$model"
    else
      echo "docker model (Docker Model Runner) is not available: pull $model with your model runner yourself, or pass --skip-pull"
    fi
  fi
  add=(--backend "$backend" --config "$root/litellm/config.yaml" --env-file "$root/.env")
  [[ -n "$model" ]] && add+=(--model "$model")
  [[ -n "$api_base" ]] && add+=(--api-base "$api_base")
  [[ -n "$provider" ]] && add+=(--provider "$provider")
  "$tsx" "$scripts/lib/add-model.ts" "${add[@]}"
fi

# --- 5. pulumi up --------------------------------------------------------------------------------------------
step "pulumi up (stack $stack)"
pulumi up --yes --stack "$stack"

outputs="$(pulumi stack output --stack "$stack" --json --show-secrets)"
# out <javascript expression over the outputs `o`>: prints its value
out() { node -e 'const o = JSON.parse(process.argv[1]); const v = (0, eval)(process.argv[2])(o); process.stdout.write(v == null ? "" : String(v));' "$outputs" "o => $1"; }
gateway_url="$(out 'o.urls.gateway')"
[[ -n "$gateway_url" ]] || die "pulumi stack output has no urls.gateway"

# --- 6. gateway health ---------------------------------------------------------------------------------------
step "waiting for the gateway ($gateway_url/health/liveliness, up to 5 minutes)"
deadline=$((SECONDS + ${BOOTSTRAP_HEALTH_TIMEOUT:-300}))
until curl -fsS --max-time 5 -o /dev/null "$gateway_url/health/liveliness" 2>/dev/null; do
  if ((SECONDS >= deadline)); then
    die "the gateway did not answer $gateway_url/health/liveliness within 5 minutes; see: scripts/platform.sh ps; scripts/platform.sh logs gateway"
  fi
  echo "  gateway not answering yet ($((deadline - SECONDS)) s left); it waits for the database and the guard scanner"
  sleep 5
done
echo "  gateway is alive"

# --- 7. smoke test -------------------------------------------------------------------------------------------
if ((skip_smoke)); then
  step "smoke test skipped (--skip-smoke-test); run it with scripts/smoke-test.sh"
elif [[ "$backend" == skip ]]; then
  step "smoke test skipped: no model registered (scripts/add-model.sh, pulumi up, then scripts/smoke-test.sh)"
else
  step "smoke test"
  smoke=(--gateway-url "$gateway_url" --key "$(out 'o.gatewayMasterKey')" --env-file "$root/.env"
    --trace-url "$(out 'o.urls.trace')" --metrics-url "$(out 'o.urls.metrics')")
  # The model just registered (mock-npu: its clone; without --model the smoke test takes the first listed).
  if [[ -n "$model" ]]; then
    if [[ "$backend" == mock-npu ]]; then smoke+=(--model "$model-npu"); else smoke+=(--model "$model"); fi
  fi
  "$scripts/smoke-test.sh" "${smoke[@]}"
fi

# --- 8. where everything is ----------------------------------------------------------------------------------
step "the platform (stack $stack)"
cat <<INFO
  chat          $(out 'o.urls.chat')          (register: the first account is the admin)
  console       $(out 'o.urls.console')       (signs in with the chat's session)
  gateway       $gateway_url       (OpenAI base URL: $(out 'o.urls.gatewayApi'))
  traces        $(out 'o.urls.trace')       login $(out 'o.traceLogin.email') / $(out 'o.traceLogin.password')
  dashboards    $(out 'o.urls.dashboards')       login $(out 'o.dashboardsLogin.user') / $(out 'o.dashboardsLogin.password')
  metrics       $(out 'o.urls.metrics')
  alerts        $(out 'o.urls.alertmanager')
  master key    pulumi stack output --show-secrets gatewayMasterKey   (also GATEWAY_MASTER_KEY in .env)

Pulumi needs, in a new shell:
  export PULUMI_BACKEND_URL=$PULUMI_BACKEND_URL PULUMI_CONFIG_PASSPHRASE_FILE=$PULUMI_CONFIG_PASSPHRASE_FILE
Operations: scripts/platform.sh --help
INFO
