#!/usr/bin/env bash
# Installs this clone's HEAD into a new project through a git URL, as a user of the README's git route
# would, and checks that the entries import and the `terminus` binary runs (a git dependency is built
# by its `prepare` script; without one npm installs it without dist/). About 5-8 min on 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
cd "$project"
cat > package.json <<'JSON'
{ "name": "install-from-git", "version": "1.0.0", "private": true, "type": "module",
  "allowScripts": { "better-sqlite3": true } }
JSON
npm install --no-audit --no-fund "git+file://$repo" zod@^4.2.0
node --input-type=module -e "
  for (const entry of ['', '/client', '/wires', '/telemetry', '/bridge', '/sqlite', '/postgres']) {
    const names = Object.keys(await import('mcp-terminus' + entry));
    if (names.length === 0) throw new Error('mcp-terminus' + entry + ' exports nothing');
  }
  console.log('install-from-git: every entry imports');
"
node_modules/.bin/terminus --version
