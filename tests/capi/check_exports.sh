#!/bin/sh
# Checks that libsparseflow.so exports exactly the functions sparseflow.h declares, all prefixed
# sparseflow_, and nothing else (no C++ symbols, no libstdc++ or Highway internals).
# Usage: check_exports.sh NM C_COMPILER LIBRARY HEADER
set -eu
nm_tool=$1 cc=$2 library=$3 header=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$nm_tool" -D --defined-only "$library" | awk '{ print $NF }' | sort -u > "$tmp/exported"
# Declared functions: names followed by '(' in the preprocessed header (comments and macros gone).
"$cc" -std=c99 -E -P "$header" | tr '\n' ' ' | grep -o 'sparseflow_[a-z0-9_]*[[:space:]]*(' |
  sed 's/[[:space:]]*($//' | sort -u > "$tmp/declared"

status=0
if grep -v '^sparseflow_' "$tmp/exported" > "$tmp/foreign"; then
  echo "FAIL: $library exports symbols outside sparseflow_*:"
  sed 's/^/  /' "$tmp/foreign"
  status=1
fi
if ! diff -u "$tmp/declared" "$tmp/exported" > "$tmp/diff"; then
  echo "FAIL: exports differ from the functions sparseflow.h declares (- declared, + exported):"
  grep '^[-+][^-+]' "$tmp/diff" | sed 's/^/  /'
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "OK: $(wc -l < "$tmp/exported") symbols exported, all sparseflow_*," \
    "each declared in $(basename "$header")"
fi
exit "$status"
