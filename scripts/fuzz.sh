#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZTIME each (default 30s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(' --exclude-dir=node_modules . | sort |
while read -r file; do
  pkg=./$(dirname "${file#./}")
  for name in $(grep -oE '^func Fuzz[A-Za-z0-9_]+' "$file" | cut -d' ' -f2); do
    echo "fuzz: $pkg $name ($fuzztime)"
    go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
