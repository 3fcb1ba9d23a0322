#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, checks that exactly the public headers
# were installed (public_headers.txt: gradring.h and what it includes; an internal header
# that a public one starts to include shows up here), then configures, builds and runs the
# consumer project against the installed package alone.
# Usage: check_install.sh <build dir> <source dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
(cd "$tmp/prefix/include/gradring" && find . -name '*.h' | sed 's|^\./||' | LC_ALL=C sort) > "$tmp/installed.txt"
grep -v '^#' "$src/tests/install/public_headers.txt" | LC_ALL=C sort > "$tmp/expected.txt"
if ! diff "$tmp/expected.txt" "$tmp/installed.txt" > "$tmp/headers.diff"; then
  echo "check_install: the installed headers differ from tests/install/public_headers.txt"
  echo "('>' installed but not public: an internal header reached from gradring.h; '<' public but not installed):"
  cat "$tmp/headers.diff"
  exit 1
fi
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/consumer/consumer"
