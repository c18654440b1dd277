#!/usr/bin/env bash
# Day-to-day operations of a running platform: services and their health, logs, restarts, stop and start,
# destroy, and backups of the relational (Postgres) and document (MongoDB) databases.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/platform.sh <command> [arguments]

Commands:
  ps                       the stack's containers with their state and health
  logs <service> [-f]      the last 200 log lines of a service (-f: follow)
  restart <service>        restart one service
  stop                     stop every container, keeping all data (start again: start, or pulumi up)
  start                    start the stopped containers
  destroy [--volumes]      pulumi destroy; with --volumes also delete every data volume (ALL DATA IS LOST)
  backup [dir]             dump relational-db (pg_dumpall) and document-db (mongodump) into dir
                           (default backups/<UTC timestamp>)
  restore <dir>            load a backup made by `backup` into the running databases

Options:
  --stack <name>           Pulumi stack for destroy (default local)
  --yes                    destroy without asking
  -h, --help               show this help

Services are the containers on the stack's network "platform" (gateway, console, chat, relational-db, ...).
Docker commands go to DOCKER_HOST when set (the vm stack: DOCKER_HOST=ssh://user@host).
USAGE
}

die() { printf 'platform: %s\n' "$*" >&2; exit 1; }

NETWORK=platform
VOLUME_PREFIX=platform-
scripts="$(cd "$(dirname "$0")" && pwd)"
root="${PLATFORM_ROOT:-$(dirname "$scripts")}"

stack=local yes=0 args=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --stack) [[ $# -ge 2 ]] || die "--stack needs a value"; stack="$2"; shift 2 ;;
    --yes | -y) yes=1; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]}"
[[ $# -ge 1 ]] || { usage >&2; exit 2; }
command="$1"; shift

containers() { docker ps -a --filter "network=$NETWORK" --format '{{.Names}}' | sort; }
service() { # service <name>: fails naming the services when name is not one
  [[ -n "${1:-}" ]] || die "$command needs a service name; services: $(containers | tr '\n' ' ')"
  containers | grep -qx "$1" || die "no service $1 on network $NETWORK; services: $(containers | tr '\n' ' ')"
}

case "$command" in
  ps)
    docker ps -a --filter "network=$NETWORK" --format 'table {{.Names}}\t{{.Status}}\t{{.Ports}}'
    ;;
  logs)
    service "${1:-}"
    if [[ "${2:-}" == -f ]]; then docker logs --tail 200 -f "$1"; else docker logs --tail 200 "$1"; fi
    ;;
  restart)
    service "${1:-}"
    docker restart "$1"
    ;;
  stop)
    mapfile -t running < <(docker ps --filter "network=$NETWORK" --format '{{.Names}}')
    ((${#running[@]})) || { echo "nothing running"; exit 0; }
    docker stop "${running[@]}"
    echo "stopped ${#running[@]} containers; data volumes kept (scripts/platform.sh start, or pulumi up)"
    ;;
  start)
    mapfile -t all < <(containers)
    ((${#all[@]})) || die "no containers on network $NETWORK: run scripts/bootstrap.sh"
    docker start "${all[@]}"
    ;;
  destroy)
    volumes=0
    [[ "${1:-}" == --volumes ]] && volumes=1
    if ((yes == 0)); then
      [[ -t 0 ]] || die "destroy asks for confirmation: run it on a terminal or pass --yes"
      warning="every container of stack $stack"
      ((volumes)) && warning="$warning AND EVERY DATA VOLUME (databases, traces, dashboards)"
      read -r -p "Delete $warning? Type yes: " answer
      [[ "$answer" == yes ]] || die "not confirmed"
    fi
    # shellcheck source=scripts/lib/pulumi-state.sh
    . "$scripts/lib/pulumi-state.sh"
    use_pulumi_state "$root" 0
    (cd "$root" && pulumi destroy --yes --stack "$stack")
    if ((volumes)); then
      mapfile -t vols < <(docker volume ls --format '{{.Name}}' | grep "^$VOLUME_PREFIX" || true)
      if ((${#vols[@]})); then docker volume rm "${vols[@]}"; else echo "no $VOLUME_PREFIX* volumes left"; fi
    else
      echo "data volumes kept (${VOLUME_PREFIX}*); delete them with: scripts/platform.sh destroy --volumes"
    fi
    ;;
  backup)
    dir="${1:-$root/backups/$(date -u +%Y%m%dT%H%M%SZ)}"
    mkdir -p "$dir"
    # The databases' own credentials, read inside their containers (never on this command line).
    docker exec relational-db sh -c 'pg_dumpall --clean --if-exists -U "$POSTGRES_USER"' >"$dir/relational-db.sql"
    echo "relational-db: $dir/relational-db.sql ($(wc -c <"$dir/relational-db.sql") bytes)"
    docker exec document-db sh -c 'mongodump --quiet --archive --gzip -u "$MONGO_INITDB_ROOT_USERNAME" -p "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin' >"$dir/document-db.archive.gz"
    echo "document-db: $dir/document-db.archive.gz ($(wc -c <"$dir/document-db.archive.gz") bytes)"
    ;;
  restore)
    dir="${1:-}"
    [[ -n "$dir" ]] || die "restore needs the folder a backup wrote"
    [[ -s "$dir/relational-db.sql" && -s "$dir/document-db.archive.gz" ]] || die "$dir has no relational-db.sql and document-db.archive.gz"
    # pg_dumpall --clean drops each database before creating it again; a plain DROP DATABASE fails while the
    # gateway is connected (and everything after it then lands on the live tables, restoring nothing), so the
    # drops are made WITH (FORCE) (PostgreSQL 13+), which ends those sessions. Errors psql reports for the
    # connected role itself (it cannot be dropped, it already exists) are expected.
    sed -E 's/^(DROP DATABASE IF EXISTS [^;]+);$/\1 WITH (FORCE);/' "$dir/relational-db.sql" |
      docker exec -i relational-db sh -c 'psql -q -v ON_ERROR_STOP=0 -U "$POSTGRES_USER" -d postgres' >/dev/null
    echo "relational-db: restored from $dir/relational-db.sql"
    docker exec -i document-db sh -c 'mongorestore --quiet --drop --archive --gzip -u "$MONGO_INITDB_ROOT_USERNAME" -p "$MONGO_INITDB_ROOT_PASSWORD" --authenticationDatabase admin' <"$dir/document-db.archive.gz"
    echo "document-db: restored from $dir/document-db.archive.gz"
    echo "restart the services that cache data: scripts/platform.sh restart gateway (and chat, console)"
    ;;
  *)
    die "unknown command $command (see --help)"
    ;;
esac
