#!/usr/bin/env bash
# kiln's run-time benchmarks in one command: configures a Release benchmark tree, builds it, runs every
# benchmark binary with repetitions, keeps each binary's Google Benchmark JSON and prints the Markdown
# tables of bench/RESULTS.md (bench/ratios.py).
#
# Usage: bench/run_benchmarks.sh [benchmark_filter]      (e.g. 'softmax' to run only those benchmarks)
# Environment (all optional):
#   CXX                    compiler (default g++)
#   KILN_BENCH_DIR         build tree (default build/bench-<compiler name>)
#   KILN_BENCH_JOBS        parallel build jobs (default 1: the machine is shared)
#   KILN_BENCH_REPS        repetitions per benchmark; the tables show the median (default 5)
#   KILN_BENCH_NATIVE      ON/OFF: -march=native (default ON)
#   KILN_BENCH_MALLOC      default: glibc's allocator as users get it (the figures of record);
#                          steady: glibc told never to give memory back (MALLOC_TRIM_THRESHOLD_) and to
#                          take buffers up to 32 MB from its heap (MALLOC_MMAP_THRESHOLD_), so no call
#                          pays page faults for a fresh temporary: what is left is the computation.
#                          Comparing the two shows how much of a gap is the allocator (see RESULTS.md).
# Output: <build tree>/results[-steady]/<binary>.json and ratios.md beside them
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cxx=${CXX:-g++}
dir=${KILN_BENCH_DIR:-build/bench-$(basename "$cxx")}
jobs=${KILN_BENCH_JOBS:-1}
reps=${KILN_BENCH_REPS:-5}
filter=${1:-.}

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DKILN_BUILD_BENCHMARKS=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_INSTALL=OFF \
  -DKILN_BENCH_NATIVE="${KILN_BENCH_NATIVE:-ON}" >/dev/null
cmake --build "$dir" -j "$jobs"

# The binaries bench/CMakeLists.txt builds, in its order.
mapfile -t binaries < <(sed -n '/^set(KILN_BENCHMARKS/,/^)/{/^ *bench_/s/^ *//p}' bench/CMakeLists.txt)
results=$dir/results
case "${KILN_BENCH_MALLOC:-default}" in
  default) ;;
  steady)
    export MALLOC_TRIM_THRESHOLD_=$((1 << 40)) MALLOC_MMAP_THRESHOLD_=$((32 << 20))
    results=$dir/results-steady
    ;;
  *) echo "KILN_BENCH_MALLOC must be default or steady" >&2; exit 2 ;;
esac
mkdir -p "$results"
jsons=()
for b in "${binaries[@]}"; do
  exe=$dir/bench/$b
  [[ -x "$exe" ]] || continue
  echo "== $b"
  "$exe" --benchmark_filter="$filter" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
    --benchmark_out="$results/$b.json" --benchmark_out_format=json
  jsons+=("$results/$b.json")
done

echo
{
  echo "allocator: ${KILN_BENCH_MALLOC:-default}; $reps repetitions; $("$cxx" --version | head -n 1)"
  echo
  python3 bench/ratios.py "${jsons[@]}"
} | tee "$results/ratios.md"
echo "(JSON and tables in $results)"
