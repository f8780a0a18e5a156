#!/usr/bin/env bash
# Fails when the committed generated code differs from what the .proto files generate now.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="gen.check.$$"
trap 'rm -rf "$tmp"' EXIT
bash scripts/gen.sh "$tmp" >/dev/null
if ! diff -r -q gen "$tmp" >/dev/null; then
  diff -r gen "$tmp" | head -40
  echo "proto/gen is stale: run 'npm run proto:gen' and commit the result." >&2
  exit 1
fi
echo "proto/gen is up to date."
