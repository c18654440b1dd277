#!/usr/bin/env bash
# Makes a machine ready for `npm test`: installs the Debian packages listed in .ci/apt-packages that are
# missing (Postgres, Redis, caddy, shellcheck) and starts Postgres on 127.0.0.1:5432 and Redis on
# 127.0.0.1:6379 when they are not answering. Safe to run again: it only does what is missing.
# Needs root for apt-get and for starting the servers (uses sudo when run as another user).
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/test-deps.sh [--help]

Installs what the test suite needs and starts it:
  - the Debian packages of .ci/apt-packages that are not installed (apt-get; Debian or Ubuntu)
  - Postgres on 127.0.0.1:5432 (the distribution's cluster) unless it already answers
  - Redis on 127.0.0.1:6379 (no persistence) unless it already answers

Options:
  -h, --help   show this help
USAGE
}

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) echo "test-deps: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
step() { printf '\n==> %s\n' "$*"; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

step "Debian packages (.ci/apt-packages)"
command -v dpkg-query >/dev/null || { echo "test-deps: needs a Debian-based system (dpkg, apt-get)" >&2; exit 1; }
missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < .ci/apt-packages
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "all present"
fi

step "Postgres"
pg_version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -1)
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  as_root pg_ctlcluster --skip-systemctl-redirect "$pg_version" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432
# The tests connect as postgres without a password (TEST_POSTGRES_URL overrides that). A fresh Debian cluster
# asks for one over TCP: trust local TCP connections, as a throwaway test server does.
if ! psql -h 127.0.0.1 -U postgres -w -d postgres -qAtc 'select 1' >/dev/null 2>&1 && [[ -z "${TEST_POSTGRES_URL:-}" ]]; then
  hba="/etc/postgresql/$pg_version/main/pg_hba.conf"
  echo "trusting TCP connections from 127.0.0.1 and ::1 in $hba (the tests log in as postgres without a password)"
  as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  as_root pg_ctlcluster --skip-systemctl-redirect "$pg_version" main reload
  sleep 1
  psql -h 127.0.0.1 -U postgres -w -d postgres -qAtc 'select 1' >/dev/null
fi

step "Redis"
if ! redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG && break; sleep 1; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping
