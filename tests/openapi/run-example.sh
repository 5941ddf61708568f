#!/usr/bin/env bash
# Runs one client example of docs/examples against GESSO_URL with GESSO_KEY (docs/testing.md):
#   tests/openapi/run-example.sh curl|python|typescript PROMPT OUT.png
# The TypeScript one is type-checked under --strict and compiled first, into a temporary folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
examples="$here/../../docs/examples"
case "$1" in
  curl) exec "$examples/curl.sh" "$2" "$3" ;;
  python) exec python3 "$examples/client.py" "$2" "$3" ;;
  typescript)
    "$here/install.sh"
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    "$here/node_modules/.bin/tsc" --strict --noEmitOnError --target es2022 --module commonjs \
      --types node --typeRoots "$here/node_modules/@types" --outDir "$out" "$examples/client.ts"
    node "$out/client.js" "$2" "$3"
    ;;
  *) echo "usage: run-example.sh curl|python|typescript PROMPT OUT" >&2; exit 2 ;;
esac
