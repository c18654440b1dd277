#!/usr/bin/env bash
# Sourced by bootstrap.sh and platform.sh: the stack's Pulumi state lives in <root>/.pulumi (a file backend, no
# cloud account), its secrets encrypted with the passphrase in <root>/.pulumi/passphrase.

# use_pulumi_state <root> <make: 1 to create the folder and passphrase when missing, 0 to require them>
# Exports PULUMI_BACKEND_URL, PULUMI_CONFIG_PASSPHRASE_FILE and PULUMI_SKIP_UPDATE_CHECK.
use_pulumi_state() {
  local state="$1/.pulumi"
  if [[ ! -s "$state/passphrase" ]]; then
    if [[ "$2" != 1 ]]; then
      echo "no Pulumi state in $state: run scripts/bootstrap.sh first" >&2
      return 1
    fi
    mkdir -p "$state/state"
    (umask 077 && openssl rand -base64 32 >"$state/passphrase")
    echo "made the passphrase of the stack's secrets: $state/passphrase (keep it: the state cannot be read without it)"
  fi
  mkdir -p "$state/state"
  export PULUMI_BACKEND_URL="file://$state/state"
  export PULUMI_CONFIG_PASSPHRASE_FILE="$state/passphrase"
  export PULUMI_SKIP_UPDATE_CHECK=true
}
