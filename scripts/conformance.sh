#!/usr/bin/env bash
# Runs every `tasks-*` scenario of the official MCP conformance suite against
# `terminus serve --fixtures conformance` and fails if any non-skipped scenario fails.
#
#   npm run conformance                # build, start the server on a free port, run, stop
#   npm run conformance -- --no-build  # reuse dist/
#
# The suite needs Node 22 (it imports fs.globSync); npx fetches node@22 from the npm registry, so this
# runs under the project's Node 20 too (reference 4.1). Extension scenarios must not get
# --spec-version (they would be SKIPPED).
#
# Another server (scripts/conformance-install.sh): CONFORMANCE_SERVER is its command (one process,
# given the database path as its last argument, printing `terminus listening on <url> ...`);
# CONFORMANCE_AFTER is a command run with the url as its last argument after the scenarios, while
# the server still runs (its failure fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE='@modelcontextprotocol/conformance@0.2.0-alpha.12'
log() { printf '%s\n' "$*" >&2; }
conformance() { (cd "${TMPDIR:-/tmp}" && NO_COLOR=1 FORCE_COLOR=0 npx -y -p node@22 -p "$SUITE" -c "conformance $*" 2>&1); }

if [[ "${1:-}" != "--no-build" ]]; then
  log "== npm run build"
  npm run build --silent >&2
fi

log "== listing the tasks-* server scenarios of $SUITE"
listing=$(conformance list --server) || { log "$listing"; exit 1; }
mapfile -t scenarios < <(printf '%s\n' "$listing" | sed -nE 's/^[[:space:]]*-[[:space:]]+(tasks-[a-z0-9-]+).*/\1/p')
if [[ ${#scenarios[@]} -eq 0 ]]; then
  log "no tasks-* scenarios in the listing:"; log "$listing"; exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/terminus-conformance-XXXXXX")
# The server's redirections are made in the background child: on a loaded machine the loop below can
# read before they exist (sed fails, set -e exits 2: a CI run of 2026-12-01 did). Made here first.
: >"$dir/stdout"
: >"$dir/stderr"
if [[ -n "${CONFORMANCE_SERVER:-}" ]]; then
  # shellcheck disable=SC2086 # a command line, split on purpose
  $CONFORMANCE_SERVER "$dir/conformance.db" >"$dir/stdout" 2>"$dir/stderr" &
else
  node dist/cli/main.js serve --port 0 --fixtures conformance --db "$dir/conformance.db" >"$dir/stdout" 2>"$dir/stderr" &
fi
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server"
    for _ in $(seq 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server" 2>/dev/null && kill -KILL "$server"
  fi
  wait "$server" 2>/dev/null || true
  rm -rf "$dir"
}
trap stop_server EXIT

url=''
for _ in $(seq 300); do
  url=$(sed -nE 's/^terminus listening on ([^ ]+) .*/\1/p' "$dir/stdout")
  [[ -n "$url" ]] && break
  kill -0 "$server" 2>/dev/null || { log "server exited:"; cat "$dir/stderr" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { log "server printed no listening line within 30 s"; exit 1; }
log "== server at $url; ${#scenarios[@]} scenarios"

table=$'| scenario | result | checks passed | failed | warnings |\n| --- | --- | --- | --- | --- |'
failed=()
for scenario in "${scenarios[@]}"; do
  status=0
  output=$(conformance server --url "$url" --scenario "$scenario") || status=$?
  summary=$(printf '%s\n' "$output" | sed -nE 's/.*Passed: ([0-9]+)\/([0-9]+), ([0-9]+) failed, ([0-9]+) warnings.*/\1 \2 \3 \4/p' | tail -1)
  read -r passed total nfailed warnings <<<"${summary:-- - - -}"
  if [[ $status -ne 0 ]]; then
    result=FAIL; failed+=("$scenario"); log "$output"
  elif [[ "$total" == "0" || -z "$summary" ]]; then
    result=skipped
  else
    result=pass
  fi
  log "$(printf '%-8s %s %s/%s' "$result" "$scenario" "$passed" "$total")"
  table+=$'\n'"| $scenario | $result | $passed/$total | $nfailed | $warnings |"
done

log ""; log "$table"; log ""
if [[ -n "${CONFORMANCE_AFTER:-}" ]]; then
  # shellcheck disable=SC2086 # a command line, split on purpose
  $CONFORMANCE_AFTER "$url" || failed+=("CONFORMANCE_AFTER")
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  log "${#failed[@]} scenario(s) failed: ${failed[*]}"
  exit 1
fi
log "all ${#scenarios[@]} tasks-* scenarios passed or were skipped by the suite"
