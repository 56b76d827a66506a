#!/usr/bin/env bash
# The main job for now: read every bundled real matrix, convert it through the format presets and
# print storage bytes and conversion times per format (later issues replace this with the
# compile-and-run job).
set -euo pipefail
build="${1:-build}"
"$build/bin/sparseflow" survey data
