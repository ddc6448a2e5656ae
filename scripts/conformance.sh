#!/usr/bin/env bash
# Runs every server scenario of the official MCP conformance suite against
# `terminus serve --fixtures conformance` and fails on any failure. Scenarios (or single checks) that
# do not apply to what we serve are listed with their reason in scripts/conformance-skips.json (and
# docs/wires.md); everything else must pass.
#
#   npm run conformance                # build, start the server on a free port, run, stop
#   npm run conformance -- --no-build  # reuse dist/
#
# Two passes of the whole suite, each one process (about 15 s each): the suite's default, which runs
# each scenario at the newest dated revision it applies to (2025-11-25 for the scenarios of both
# eras; 2026-07-28 for the 2026-only and extension ones), then `--spec-version 2026-07-28` for the
# 2026-07-28 leg of the scenarios of both eras. scripts/conformance-report.mjs reads the results.
#
# The suite needs Node 22 (it imports fs.globSync); npx fetches node@22 from the npm registry, so this
# runs under the project's Node 20 too (reference 4.1).
#
# Another server (scripts/conformance-install.sh): CONFORMANCE_SERVER is its command (one process,
# given the database path as its last argument, printing `terminus listening on <url> ...`);
# CONFORMANCE_ROUTE picks its extra skips in scripts/conformance-skips.json; CONFORMANCE_AFTER is a
# command run with the url as its last argument after the scenarios, while the server still runs
# (its failure fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

SUITE='@modelcontextprotocol/conformance@0.2.0-alpha.12'
log() { printf '%s\n' "$*" >&2; }
conformance() { (cd "${TMPDIR:-/tmp}" && NO_COLOR=1 FORCE_COLOR=0 npx -y -p node@22 -p "$SUITE" -c "conformance $*" 2>&1); }

if [[ "${1:-}" != "--no-build" ]]; then
  log "== npm run build"
  npm run build --silent >&2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/terminus-conformance-XXXXXX")
log "== listing the server scenarios of $SUITE"
conformance list --server >"$dir/listing" || { cat "$dir/listing" >&2; exit 1; }

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

# The suite's own exit code counts the skipped scenarios' failures too; the report decides.
log "== server at $url; the whole suite at each scenario's default revision"
conformance server --url "$url" --suite all -o "$dir/default" >"$dir/default.log" || true
log "== the whole suite again at 2026-07-28"
conformance server --url "$url" --suite all --spec-version 2026-07-28 -o "$dir/modern" >"$dir/modern.log" || true

failed=0
node "$root/scripts/conformance-report.mjs" --listing "$dir/listing" \
  --run "default=$dir/default" --run "2026-07-28=$dir/modern" \
  ${CONFORMANCE_ROUTE:+--route "$CONFORMANCE_ROUTE"} || failed=1
if [[ -n "${CONFORMANCE_AFTER:-}" ]]; then
  # shellcheck disable=SC2086 # a command line, split on purpose
  $CONFORMANCE_AFTER "$url" || { log "CONFORMANCE_AFTER failed"; failed=1; }
fi
if [[ $failed -ne 0 ]]; then
  log "the suite's logs: rerun with the server and \`npx -y -p node@22 -p $SUITE -c 'conformance server --url <url> --scenario <name> --verbose'\`"
  exit 1
fi
log "every applicable server scenario passed"
