# Runs the compile-time budget test (registered in tests/CMakeLists.txt, see tests/compile_time/README.md):
#   cmake -DKILN_CT_BUILD_DIR=<build> -DKILN_CT_TARGET=<target> -DKILN_CT_OBJECTS=<object files>
#         -DKILN_CT_BUDGET=<seconds> [-DKILN_CT_CONFIG=<config>] -P check_compile_time.cmake
# Deletes <target>'s object files, builds <target> again (with the build tree's compiler and flags) and fails
# when the build took more than <seconds> of CPU time (user + system of the build and the compiler it runs,
# from bash's `times`): CPU time, not wall time, so that a machine busy with other work slows the test
# little. Without bash it falls back to wall time, with the budget doubled.
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS KILN_CT_BUILD_DIR KILN_CT_TARGET KILN_CT_OBJECTS KILN_CT_BUDGET)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_compile_time.cmake: ${var} is not set")
  endif()
endforeach()

set(config_args "")
if(DEFINED KILN_CT_CONFIG AND NOT KILN_CT_CONFIG STREQUAL "")
  set(config_args --config "${KILN_CT_CONFIG}")
endif()

# The objects are listed with "|" between them (a CMake list would be split on the test's command line).
string(REPLACE "|" ";" objects "${KILN_CT_OBJECTS}")
file(REMOVE ${objects})

# Seconds (a decimal number) as milliseconds.
function(to_ms out seconds)
  if(seconds MATCHES "^([0-9]+)\\.([0-9]+)$")
    string(SUBSTRING "${CMAKE_MATCH_2}000" 0 3 frac)
    math(EXPR ms "${CMAKE_MATCH_1} * 1000 + 1${frac} - 1000")
  else()
    math(EXPR ms "${seconds} * 1000")
  endif()
  set(${out} ${ms} PARENT_SCOPE)
endfunction()
to_ms(budget_ms "${KILN_CT_BUDGET}")

find_program(KILN_CT_BASH bash)
string(TIMESTAMP start "%s")
if(KILN_CT_BASH)
  # `times` prints the shell's user and system time, then its children's (after they are waited for,
  # which includes the compiler that the build tool ran), as "XmY.YYYs XmY.YYYs".
  execute_process(
    COMMAND "${KILN_CT_BASH}" -c "\"$0\" \"$@\" >&2; status=$?; times; exit $status"
            "${CMAKE_COMMAND}" --build "${KILN_CT_BUILD_DIR}" --target "${KILN_CT_TARGET}" ${config_args}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE times
    ERROR_VARIABLE output)
else()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${KILN_CT_BUILD_DIR}" --target "${KILN_CT_TARGET}" ${config_args}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
endif()
string(TIMESTAMP end "%s")
math(EXPR wall "${end} - ${start}")

if(NOT result EQUAL 0)
  message("${output}")
  message(FATAL_ERROR "${KILN_CT_TARGET}: the build failed (${result})")
endif()

if(KILN_CT_BASH AND times MATCHES "\n([0-9]+)m([0-9.]+)s ([0-9]+)m([0-9.]+)s")
  set(user_min ${CMAKE_MATCH_1})
  set(sys_min ${CMAKE_MATCH_3})
  to_ms(user_ms "${CMAKE_MATCH_2}")
  to_ms(sys_ms "${CMAKE_MATCH_4}")
  math(EXPR cpu_ms "(${user_min} + ${sys_min}) * 60000 + ${user_ms} + ${sys_ms}")
  set(what "CPU time")
else()
  math(EXPR cpu_ms "${wall} * 1000")
  math(EXPR budget_ms "${budget_ms} * 2")
  set(what "wall time (no bash: the budget doubled)")
endif()

math(EXPR cpu_s "${cpu_ms} / 1000")
math(EXPR cpu_frac "(${cpu_ms} % 1000) / 100")
math(EXPR budget_s "${budget_ms} / 1000")
message("${KILN_CT_TARGET}: ${what} ${cpu_s}.${cpu_frac} s, budget ${budget_s} s (wall ${wall} s)")
if(cpu_ms GREATER budget_ms)
  message(FATAL_ERROR "${KILN_CT_TARGET}: compiling took ${cpu_s}.${cpu_frac} s of ${what}, over its budget of "
                      "${budget_s} s: some change made compile time grow faster with the graph (a pass that "
                      "became quadratic?). Profile it: tests/compile_time/README.md.")
endif()
