#!/usr/bin/env bash
# Renames a program written against libtorch's C++ API into one against gradring's, the
# mechanical way a user ports: <torch/torch.h> -> <gradring/gradring.h>, torch:: -> gr::,
# namespace torch -> namespace gr, TORCH_* macros -> GR_*. Nothing else is touched: what
# still fails to compile afterwards is a difference from libtorch (docs/porting-from-libtorch.md).
# Usage: port.sh <libtorch program.cpp> <gradring program.cpp>
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <libtorch program.cpp> <gradring program.cpp>" >&2; exit 2; }
sed -E \
  -e 's|#include[[:space:]]*<torch/torch\.h>|#include <gradring/gradring.h>|' \
  -e 's/\btorch::/gr::/g' \
  -e 's/\bnamespace torch\b/namespace gr/g' \
  -e 's/\bTORCH_([A-Z0-9_]+)/GR_\1/g' \
  "$1" > "$2"
