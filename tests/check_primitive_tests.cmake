# Checks that every primitive of tests/primitives.txt has the tests the list does not generate itself, so a
# new primitive cannot skip them (test_op_headers, generated from the list by tests/op_headers.cmake, runs
# each line under jit and checks its grad against central differences: nothing to check for those).
#   Empty extents  every line has a test in the empty-extent executables named after the line or after its
#                  header: the name after '/' of a typed suite Empty<Family>/<name> (a row of its table),
#                  or a test of a suite Empty<Family> (TEST(Empty, <name>)). Read from the executables'
#                  --gtest_list_tests, so a row left out of its ::testing::Types counts as missing.
#   Batching       every user-facing header has a line with a vmap entry (test_op_headers checks vmap
#                  against a loop of jit there), or one whose vmap says "- <why>": "constant" (no operand),
#                  or a compile-fail test of tests/CMakeLists.txt whose expected diagnostic names the
#                  primitive's tag kiln::ops::<header>_p (vmap refuses it, and a test shows it).
# Run by CTest (tests/CMakeLists.txt):
#   cmake -DKILN_LIST=<primitives.txt> -DKILN_TESTS_DIR=<tests/> "-DKILN_EMPTY_TESTS=<exe>|<exe>..." -P this
#     the check (test primitive_tests)
#   the same with -DKILN_SELF_TEST=<scratch folder>
#     the check catches each kind of gap, on scratch copies of the list (test primitive_tests_check_catches)
cmake_minimum_required(VERSION 3.20)

foreach(_var IN ITEMS KILN_LIST KILN_TESTS_DIR KILN_EMPTY_TESTS)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_primitive_tests.cmake: -D${_var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" _empty_tests "${KILN_EMPTY_TESTS}")

# ---------------------------------------------------------------------------------------------------
# Self-test: the real list passes, and each gap below, added to a scratch copy of it, fails naming the line.
# ---------------------------------------------------------------------------------------------------
if(DEFINED KILN_SELF_TEST)
  file(REMOVE_RECURSE "${KILN_SELF_TEST}")
  file(MAKE_DIRECTORY "${KILN_SELF_TEST}")
  set(_run ${CMAKE_COMMAND} -DKILN_TESTS_DIR=${KILN_TESTS_DIR} "-DKILN_EMPTY_TESTS=${KILN_EMPTY_TESTS}")
  execute_process(COMMAND ${_run} -DKILN_LIST=${KILN_LIST} -P "${CMAKE_CURRENT_LIST_FILE}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "self-test: the real list fails, so the cases below would prove nothing:\n${_out}")
  endif()
  file(READ "${KILN_LIST}" _list)
  # The check of a scratch list <scratch> must fail, printing a match of <expect>.
  set(_k 0)
  function(_kiln_expect_caught what scratch expect)
    if(scratch STREQUAL _list)
      message(FATAL_ERROR "self-test: '${what}': the scratch list is the real one (nothing replaced)")
    endif()
    math(EXPR _k "${_k} + 1")
    set(_k ${_k} PARENT_SCOPE)
    set(_scratch_list "${KILN_SELF_TEST}/primitives_${_k}.txt")
    file(WRITE "${_scratch_list}" "${scratch}")
    execute_process(COMMAND ${_run} -DKILN_LIST=${_scratch_list} -P "${CMAKE_CURRENT_LIST_FILE}"
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
    if(_rc EQUAL 0)
      message(FATAL_ERROR "self-test: not caught: ${what} (${_scratch_list})")
    endif()
    if(NOT _out MATCHES "${expect}")
      message(FATAL_ERROR "self-test: '${what}' failed without naming it (expected /${expect}/):\n${_out}")
    endif()
    message(STATUS "self-test: caught: ${what}")
  endfunction()

  # A new primitive, batched, without an empty-extent test.
  set(_new "frobnicate    | frobnicate    | -           | s        | kiln::frobnicate(a)                            |")
  _kiln_expect_caught("no empty-extent test" "${_list}${_new} 0: bs\n"
                      "frobnicate \\(ops/frobnicate.hpp\\) has no empty-extent test")
  # Not batched, and no reason given.
  _kiln_expect_caught("not batched, no reason" "${_list}${_new} -\n"
                      "frobnicate \\(ops/frobnicate.hpp\\) is not batched")
  # A reason naming a compile-fail test about another primitive, or no compile-fail test at all.
  string(REPLACE "- cf_vmap_no_rule" "- cf_vmap_batched_rank" _scratch "${_list}")
  _kiln_expect_caught("reason: a compile-fail test of another primitive" "${_scratch}"
                      "dynamic_slice \\(ops/dynamic_slice.hpp\\) is not batched")
  string(REPLACE "- cf_vmap_batched_rank" "- cf_no_such_test" _scratch "${_list}")
  _kiln_expect_caught("reason: no such compile-fail test" "${_scratch}" "outer \\(ops/outer.hpp\\) is not batched")
  message(STATUS "self-test: every gap caught")
  return()
endif()

# ---------------------------------------------------------------------------------------------------
# The check.
# ---------------------------------------------------------------------------------------------------
file(STRINGS "${KILN_LIST}" _lines REGEX "^[^#].*[|]")

# The names the empty-extent tests cover.
set(_covered "")
foreach(_exe IN LISTS _empty_tests)
  if(NOT EXISTS "${_exe}")
    message(FATAL_ERROR "kiln: ${_exe} is not built: build the tests before running this check")
  endif()
  execute_process(COMMAND "${_exe}" --gtest_list_tests RESULT_VARIABLE _rc OUTPUT_VARIABLE _listing)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "kiln: ${_exe} --gtest_list_tests failed (${_rc})")
  endif()
  string(REPLACE "\n" ";" _listing "${_listing}")
  set(_suite "")
  foreach(_entry IN LISTS _listing)
    if(_entry MATCHES "^([A-Za-z0-9_/]+)\\.")
      set(_suite "${CMAKE_MATCH_1}")
      if(_suite MATCHES "^Empty[A-Za-z]*/(.+)$")
        list(APPEND _covered "${CMAKE_MATCH_1}")
      endif()
    elseif(_entry MATCHES "^  ([A-Za-z0-9_]+)")
      set(_test "${CMAKE_MATCH_1}")
      if(_suite MATCHES "^Empty[A-Za-z]*$")
        list(APPEND _covered "${_test}")
      endif()
    endif()
  endforeach()
endforeach()

file(READ "${KILN_TESTS_DIR}/CMakeLists.txt" _tests_cmake)

set(_problems "")
set(_headers "")
set(_line_count 0)
foreach(_line IN LISTS _lines)
  string(REPLACE "|" ";" _fields "${_line}")
  set(_f "")
  foreach(_field IN LISTS _fields)
    string(STRIP "${_field}" _field)
    list(APPEND _f "${_field}")
  endforeach()
  list(LENGTH _f _count)
  if(NOT _count EQUAL 6)
    message(FATAL_ERROR "kiln: ${KILN_LIST}: not 6 fields separated by '|': ${_line}")
  endif()
  list(GET _f 0 _name)
  list(GET _f 1 _header)
  list(GET _f 2 _extra)
  list(GET _f 5 _vmap)
  math(EXPR _line_count "${_line_count} + 1")
  if(NOT _name IN_LIST _covered AND NOT _header IN_LIST _covered)
    set(_named "${_header}")
    if(NOT _name STREQUAL _header)
      set(_named "${_name} or ${_header}")
    endif()
    string(APPEND _problems "  ${_name} (ops/${_header}.hpp) has no empty-extent test: add one named ${_named} to "
                            "tests/test_empty_*.cpp (a row of a typed suite, or TEST(Empty, ${_header}))\n")
  endif()
  if(NOT _header IN_LIST _headers)
    list(APPEND _headers ${_header})
    set(_batched_${_header} OFF)
    set(_reason_${_header} "")
  endif()
  if(_extra STREQUAL "internal")
    set(_internal_${_header} ON)
  elseif(NOT _vmap MATCHES "^-( |$)")
    set(_batched_${_header} ON)
  elseif(_vmap MATCHES "^- +(.+)$")
    set(_why "${CMAKE_MATCH_1}")
    if(_why STREQUAL "constant")
      set(_reason_${_header} "${_why}")
    elseif(_why MATCHES "^(cf_[a-z0-9_]+)( ([a-z0-9_]+_p))?$")
      # The compile-fail test, and the tag its expected diagnostic names: the header's own (<header>_p), or
      # the one given after it, an operand the primitive builds that vmap refuses first (det's lu_p).
      set(_cf "${CMAKE_MATCH_1}")
      set(_tag "${_header}_p")
      if(NOT CMAKE_MATCH_3 STREQUAL "")
        set(_tag "${CMAKE_MATCH_3}")
      endif()
      if(EXISTS "${KILN_TESTS_DIR}/compile_fail/${_cf}.cpp" AND _tests_cmake MATCHES "\"${_cf}\\|[^\"\n]*kiln::ops::${_tag}")
        set(_reason_${_header} "${_why}")
      else()
        set(_bad_reason_${_header} "${_why}")
      endif()
    else()
      set(_bad_reason_${_header} "${_why}")
    endif()
  endif()
endforeach()

set(_batched 0)
set(_reasoned 0)
foreach(_header IN LISTS _headers)
  if(_internal_${_header})
    continue()
  endif()
  if(_batched_${_header})
    math(EXPR _batched "${_batched} + 1")
  elseif(NOT _reason_${_header} STREQUAL "")
    math(EXPR _reasoned "${_reasoned} + 1")
  else()
    set(_detail "no line has a vmap entry")
    if(DEFINED _bad_reason_${_header})
      string(CONCAT _detail "'- ${_bad_reason_${_header}}' is neither 'constant' nor a compile-fail test of "
                            "tests/CMakeLists.txt whose expected diagnostic names kiln::ops::${_header}_p")
    endif()
    string(APPEND _problems "  ${_header} (ops/${_header}.hpp) is not batched: ${_detail}; add a line with "
                            "\"in_axes: batches\" to tests/primitives.txt, or say why not (see its header)\n")
  endif()
endforeach()

if(NOT _problems STREQUAL "")
  message(FATAL_ERROR "kiln: tests the primitives of ${KILN_LIST} lack:\n${_problems}")
endif()
list(LENGTH _empty_tests _exe_count)
message(STATUS "primitive_tests: ${_line_count} lines, each with an empty-extent test (in ${_exe_count} executables); "
               "${_batched} headers batched, ${_reasoned} not batched for a stated reason")
