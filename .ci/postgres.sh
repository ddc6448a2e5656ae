#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests: installed from Debian packages when missing, run from a
# temporary data directory on 127.0.0.1 and a free port, removed again by `stop`.
#
#   source .ci/postgres.sh start   # exports TERMINUS_TEST_PG_URL (and TERMINUS_PG_DIR for `stop`)
#   bash .ci/postgres.sh stop      # stops the instance of $TERMINUS_PG_DIR (or the last one started)
#   bash .ci/postgres.sh env       # prints `export TERMINUS_TEST_PG_URL=...` for the last one started
#   eval "$(bash .ci/postgres.sh start)"   # the same as `source`, for callers that prefer a child
#
# Works as root (the server then runs as the `postgres` OS user: postgres refuses to run as root)
# and as an ordinary user, with no standard input (CI=true). Several instances may run at once,
# each in its own directory and on its own port; nothing is written outside the temp folder except
# the packages and "$TMPDIR/terminus-pg.last", which names the last instance for `stop` and `env`.
#
# When sourced, the caller's shell options are left as they were: all work happens in functions
# that run in subshells, and only the final `export` lines are evaluated in the caller.

_tpg_last_file() { printf '%s/terminus-pg.last\n' "${TMPDIR:-/tmp}"; }

_tpg_log() { printf '== postgres: %s\n' "$*" >&2; }

# The directory holding pg_ctl/initdb of the newest installed major version, or nothing.
_tpg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [[ -n "$dir" && -x "$dir/pg_ctl" && -x "$dir/initdb" ]]; then
    printf '%s\n' "$dir"
  elif command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
  fi
}

_tpg_install() (
  set -euo pipefail
  if [[ -n "$(_tpg_bindir)" ]]; then return 0; fi
  _tpg_log "server not found: installing the Debian package postgresql"
  local sudo=()
  if [[ $EUID -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { _tpg_log "not root and no sudo: install postgresql by hand"; exit 1; }
    sudo=(sudo -n)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q >&2
  "${sudo[@]}" apt-get install -y -q --no-install-recommends postgresql </dev/null >&2
  [[ -n "$(_tpg_bindir)" ]] || { _tpg_log "postgresql installed but pg_ctl/initdb not found"; exit 1; }
)

# Runs a command as the OS user that owns the cluster.
_tpg_as_owner() {
  if [[ $EUID -eq 0 ]]; then
    if command -v runuser >/dev/null 2>&1; then
      runuser -u postgres -- "$@"
    else
      su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
  else
    "$@"
  fi
}

_tpg_port_free() {
  # A connect that fails means nobody listens there (bash's /dev/tcp, no extra tools needed).
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_tpg_free_port() {
  local port tries
  for tries in $(seq 1 50); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    if _tpg_port_free "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
  done
  _tpg_log "no free port found"
  return 1
}

_tpg_start() (
  set -euo pipefail
  _tpg_install
  local bin root data port url password attempt
  bin=$(_tpg_bindir)
  root=$(mktemp -d "${TMPDIR:-/tmp}/terminus-pg.XXXXXX")
  data="$root/data"
  mkdir -p "$data" "$root/run"
  # The server user must be able to stand in the working directory (root's home is closed to it).
  cd "$root"
  chmod 700 "$root" "$data"
  if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { _tpg_log "the postgres OS user is missing"; exit 1; }
    chown -R postgres: "$root"
  fi
  password="terminus_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s\n' "$password" >"$root/pwfile"
  [[ $EUID -ne 0 ]] || chown postgres: "$root/pwfile"

  _tpg_log "initdb in $data ($("$bin/postgres" --version))"
  # Superuser `postgres` only over the private unix socket; the test role over TCP with a password.
  _tpg_as_owner "$bin/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >"$root/initdb.log" 2>&1 \
    || { cat "$root/initdb.log" >&2; exit 1; }

  for attempt in 1 2 3 4 5; do
    port=$(_tpg_free_port)
    # fsync stays on: the durability tests must see what production sees.
    if _tpg_as_owner "$bin/pg_ctl" -D "$data" -l "$root/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $root/run -c fsync=on -c max_connections=200" \
      >/dev/null 2>&1; then
      break
    fi
    _tpg_log "start on port $port failed (attempt $attempt)"
    tail -n 5 "$root/server.log" >&2 || true
    port=""
  done
  [[ -n "$port" ]] || { _tpg_log "could not start the server"; exit 1; }

  local psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$root/run" -p "$port" -U postgres -d postgres)
  _tpg_as_owner "${psql[@]}" -c "CREATE ROLE terminus LOGIN PASSWORD '$password'" >&2
  _tpg_as_owner "${psql[@]}" -c "CREATE DATABASE terminus_test OWNER terminus" >&2

  url="postgres://terminus:$password@127.0.0.1:$port/terminus_test"
  # Ready means a TCP login with the test role works, not only that the postmaster is up.
  for attempt in $(seq 1 60); do
    if PGPASSWORD="$password" "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U terminus -d terminus_test \
      -c 'SELECT 1' >/dev/null 2>&1; then
      break
    fi
    [[ $attempt -lt 60 ]] || { _tpg_log "server never accepted a TCP login"; exit 1; }
    sleep 0.5
  done

  printf 'export TERMINUS_TEST_PG_URL=%q\nexport TERMINUS_PG_DIR=%q\n' "$url" "$root" >"$root/env"
  printf '%s\n' "$root" >"$(_tpg_last_file)"
  _tpg_log "ready on 127.0.0.1:$port (data in $root)"
  cat "$root/env"
)

_tpg_dir() {
  local dir="${TERMINUS_PG_DIR:-}"
  if [[ -z "$dir" && -f "$(_tpg_last_file)" ]]; then dir=$(cat "$(_tpg_last_file)"); fi
  printf '%s\n' "$dir"
}

_tpg_stop() (
  set -uo pipefail
  local dir bin
  dir=$(_tpg_dir)
  if [[ -z "$dir" || ! -d "$dir" ]]; then
    _tpg_log "no instance to stop"
    return 0
  fi
  bin=$(_tpg_bindir)
  cd /
  if [[ -n "$bin" && -f "$dir/data/postmaster.pid" ]]; then
    _tpg_as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 \
      || _tpg_log "pg_ctl stop failed (server log: $dir/server.log)"
  fi
  case "$dir" in
    "${TMPDIR:-/tmp}"/terminus-pg.*) rm -rf -- "$dir" ;;
    *) _tpg_log "refusing to remove $dir: not a terminus-pg temp folder" ;;
  esac
  if [[ -f "$(_tpg_last_file)" && "$(cat "$(_tpg_last_file)")" == "$dir" ]]; then rm -f "$(_tpg_last_file)"; fi
  _tpg_log "stopped and removed $dir"
)

_tpg_env() (
  local dir
  dir=$(_tpg_dir)
  if [[ -z "$dir" || ! -f "$dir/env" ]]; then
    _tpg_log "no running instance (start one with: source .ci/postgres.sh start)"
    exit 1
  fi
  cat "$dir/env"
)

_tpg_main() {
  case "${1:-}" in
    start) _tpg_start ;;
    stop) _tpg_stop ;;
    env) _tpg_env ;;
    *)
      _tpg_log "usage: postgres.sh start|stop|env"
      return 2
      ;;
  esac
}

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
  # Sourced: evaluate the export lines in the caller's shell; propagate failure as a status.
  _tpg_out=$(_tpg_main "$@") || { _tpg_status=$?; unset _tpg_out; return "$_tpg_status"; }
  if [[ "${1:-}" != "stop" ]]; then eval "$_tpg_out"; fi
  unset _tpg_out
else
  _tpg_main "$@"
fi
