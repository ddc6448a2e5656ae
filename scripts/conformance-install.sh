#!/usr/bin/env bash
# The official conformance suite's server scenarios against an author's
# McpServer (a plain tool, a resource, a prompt) that gained the fixture task tools in five lines
# (test/fixtures/installed-server.ts), then a plain tools/call of its ordinary tool on the same
# server (test/fixtures/plain-call.ts). The `install` skips of scripts/conformance-skips.json add
# what an author's own mount does not serve. Needs npx with the npm registry, like
# scripts/conformance.sh.
#
#   npm run conformance:install
set -euo pipefail
cd "$(dirname "$0")/.."
export CONFORMANCE_SERVER='node --import tsx test/fixtures/installed-server.ts'
export CONFORMANCE_AFTER='node --import tsx test/fixtures/plain-call.ts'
export CONFORMANCE_ROUTE=install
exec bash scripts/conformance.sh --no-build
