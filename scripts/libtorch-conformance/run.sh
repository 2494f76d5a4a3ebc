#!/usr/bin/env bash
# Measure gradiens against PyTorch's own C++ API tests.
# usage: run.sh PYTORCH_SRC [GRADIENS_BUILD] [OUT_DIR] [conformance.py options...]
#   PYTORCH_SRC     folder holding test/cpp/api/*.cpp (supplied by you, never committed)
#   GRADIENS_BUILD  gradiens build tree exporting gradiens::torch_compat (default: build/ at the repository root)
#   OUT_DIR         where report.md, results.json and work/ go (default ./ltapi-out)
# e.g. scripts/libtorch-conformance/run.sh ~/pytorch build ltapi-out --files tensor,autograd
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
  sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
src=$1; shift
build=$(cd "$here/../.." && pwd)/build
out=$PWD/ltapi-out
if [[ $# -gt 0 && $1 != -* ]]; then build=$1; shift; fi
if [[ $# -gt 0 && $1 != -* ]]; then out=$1; shift; fi
exec python3 "$here/conformance.py" "$src" "$build" "$out" "$@"
