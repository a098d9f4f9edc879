#!/usr/bin/env bash
# Runs the differential tester on many programs: batches of generated programs, each batch a new seed,
# built and run in their own build tree. Usage (from anywhere):
#   tests/difftest/run_many.sh N [batch size]        N programs in all (default batch size: 20)
# Environment:
#   KILN_DIFFTEST_BUILD   build tree (default: build/difftest-many in the repository)
#   KILN_DIFFTEST_JOBS    parallel compile jobs (default: 1)
#   KILN_DIFFTEST_FIRST   seed of the first batch (default: the current time); batch k uses FIRST + k
#   CXX, CMAKE_FLAGS      compiler (default g++) and extra CMake options (e.g. sanitizers)
# A batch that does not compile or whose test fails is kept: its generated sources are copied to
# <build>/failures/seed-<seed>/ and its log beside them; the summary lists the seeds to reproduce with
# cmake -DKILN_DIFFTEST_SEED=<seed>.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
total=${1:?usage: run_many.sh N [batch size]}
batch=${2:-20}
build=${KILN_DIFFTEST_BUILD:-$repo/build/difftest-many}
jobs=${KILN_DIFFTEST_JOBS:-1}
first=${KILN_DIFFTEST_FIRST:-$(date +%s)}
files=$(( batch < 4 ? batch : 4 ))

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

ran=0 k=0 failed_seeds=()
mkdir -p "$build/failures"
while (( ran < total )); do
  seed=$((first + k))
  n=$(( total - ran < batch ? total - ran : batch ))
  log="$build/batch.log"
  echo "== batch $k: seed $seed, $n programs"
  status=ok
  # shellcheck disable=SC2086
  cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="${CXX:-g++}" -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DKILN_BUILD_TESTS=ON -DKILN_BUILD_EXAMPLES=OFF \
        -DKILN_DIFFTEST_SEED="$seed" -DKILN_DIFFTEST_PROGRAMS="$n" -DKILN_DIFFTEST_FILES="$files" \
        ${CMAKE_FLAGS:-} >"$log" 2>&1 || status="configure failed"
  if [[ $status == ok ]]; then
    cmake --build "$build" --target test_difftest -j "$jobs" >>"$log" 2>&1 || status="did not compile"
  fi
  if [[ $status == ok ]]; then
    "$build/tests/difftest/test_difftest" >>"$log" 2>&1 || status="test failed"
    grep -E '^\[difftest\] [0-9]+ programs' "$log" | tail -n 1
  fi
  if [[ $status != ok ]]; then
    echo "   $status: kept in $build/failures/seed-$seed"
    mkdir -p "$build/failures/seed-$seed"
    cp -r "$build/tests/difftest/generated/." "$build/failures/seed-$seed/" 2>/dev/null
    cp "$log" "$build/failures/seed-$seed/log.txt"
    failed_seeds+=("$seed ($status)")
  fi
  ran=$((ran + n))
  k=$((k + 1))
done
echo "== $ran programs in $k batches; ${#failed_seeds[@]} failing batches"
for s in "${failed_seeds[@]}"; do echo "   seed $s"; done
(( ${#failed_seeds[@]} == 0 ))
