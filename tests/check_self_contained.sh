#!/usr/bin/env bash
# Fails if a file of the project reads outside the repository: kiln's tests, build files and scripts must
# work in a clone with nothing beside it (CI's clone has a folder of material beside it, a user's has not).
#   tests/check_self_contained.sh [ROOT]      check the tree at ROOT (default: this repository)
#   tests/check_self_contained.sh --self-test check that the checker catches each kind of escape
# What counts as reading outside: a relative path whose `..` steps climb above the root, counted from the
# folder of the file that holds it (or from the root, after ${PROJECT_SOURCE_DIR} / ${CMAKE_SOURCE_DIR}),
# and any mention of the folder `shared/` that sits beside the repository. Markdown (docs, which may
# mention such paths as prose) and data files are not read. Registered as the CTest test self_contained.
set -euo pipefail

check_tree() {
  local root=$1
  (
    cd "$root"
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && [[ -z "$(git rev-parse --show-prefix)" ]]; then
      git ls-files --cached --others --exclude-standard
    else
      find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||'
    fi
  ) | grep -vE '(^|/)(build[^/]*)/|\.(md|json|csv|png|dot|txt\.in)$|^tests/check_self_contained\.sh$' |
    (cd "$root" && perl -ne '
      BEGIN { $bad = 0 }
      if ($. == 1 || $ARGV ne $file) { $file = $ARGV; $depth = () = $file =~ m{/}g; }
      while (m{(\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/)?(?<![\w.])((?:\.\./)*\.\.)(?![\w.])}g) {
        my $from_root = defined $1;
        my $steps = () = $2 =~ m{\.\.}g;
        if ($steps > ($from_root ? 0 : $depth)) {
          print "$file:$.: climbs above the repository: $_"; $bad = 1;
        }
      }
      if (m{\bshared/(oracle|ARCHITECTURE|STYLE|hooks)\b}) {
        print "$file:$.: names the shared/ folder beside the repository: $_"; $bad = 1;
      }
      close ARGV if eof;
      END { exit $bad }
    ' $(cat))
}

if [[ "${1:-}" == --self-test ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/tests/sub"
  echo 'include_directories(${CMAKE_CURRENT_SOURCE_DIR}/../include)' >"$tmp/tests/CMakeLists.txt"
  echo '#include "../support.hpp"' >"$tmp/tests/sub/a.cpp"
  echo 'template <class... Ts> void f(Ts... ts);' >"$tmp/tests/b.cpp"
  check_tree "$tmp" >/dev/null || { echo "self-test: a clean tree was rejected"; exit 1; }
  for escape in 'set(X ${PROJECT_SOURCE_DIR}/../data.json)' 'cd "$(dirname "$0")/../.."' \
                'open("../../cases.json")' 'path = "shared/oracle/cases.json"'; do
    printf '%s\n' "$escape" >"$tmp/tests/c.txt.sh"
    if check_tree "$tmp" >/dev/null; then echo "self-test: not caught: $escape"; exit 1; fi
    rm "$tmp/tests/c.txt.sh"
  done
  echo "self-test: every escape caught"
  exit 0
fi

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
if check_tree "$root"; then
  echo "self_contained: nothing reads outside $root"
else
  echo "self_contained: the files above read outside the repository; a clone with nothing beside it fails"
  exit 1
fi
