# Runs one compile-fail test (see kiln_add_compile_fail in tests/CMakeLists.txt):
#   cmake -DKILN_CF_BUILD_DIR=<build> -DKILN_CF_TARGET=<target> -DKILN_CF_REGEX_FILE=<file>
#         [-DKILN_CF_CONFIG=<config>] -P check_compile_fail.cmake
# Passes only if building <target> fails AND the build output matches the regex stored in <file> (several
# joined by "&&&" must all match; one prefixed with "!" must not match: see below).
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS KILN_CF_BUILD_DIR KILN_CF_TARGET KILN_CF_REGEX_FILE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_compile_fail.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${KILN_CF_REGEX_FILE}" regex)

set(config_args "")
if(DEFINED KILN_CF_CONFIG AND NOT KILN_CF_CONFIG STREQUAL "")
  set(config_args --config "${KILN_CF_CONFIG}")
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${KILN_CF_BUILD_DIR}" --target "${KILN_CF_TARGET}" ${config_args}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)  # same variable: stdout and stderr merged, in order

# For the log of a failing test: the first compiler line that says "error:", then the start of the output.
# (Plain string operations only: compiler output is full of '[' and ';', which CMake lists mangle.)
function(print_excerpt)
  string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${output}")
  if(first_error)
    message("First error line:\n  ${first_error}")
  endif()
  string(LENGTH "${output}" length)
  set(limit 8000)
  if(length GREATER limit)
    string(SUBSTRING "${output}" 0 ${limit} head)
    message("Build output (first ${limit} of ${length} characters):\n${head}\n[...]")
  else()
    message("Build output:\n${output}")
  endif()
endfunction()

if(result EQUAL 0)
  message("compile-fail test ${KILN_CF_TARGET}: the source COMPILED, but it must not.")
  print_excerpt()
  message(FATAL_ERROR "${KILN_CF_TARGET}: expected a compile error matching: ${regex}")
endif()

# The regex may be several, separated by "&&&": every one must match (the message and, say, the
# argument index, which compilers print on different lines and in different orders). One that starts
# with "!" must NOT match: "!cannot be called with this many" checks that a misleading diagnostic is
# absent (a regex cannot start with "!" otherwise; write "[!]" for a literal one).
string(REPLACE "&&&" ";" regexes "${regex}")
foreach(one IN LISTS regexes)
  string(STRIP "${one}" one)
  if(one MATCHES "^!")
    string(SUBSTRING "${one}" 1 -1 absent)
    if(output MATCHES "${absent}")
      message("compile-fail test ${KILN_CF_TARGET}: the build failed (${result}), but with an error that must not appear.")
      message("Matched the forbidden pattern: ${absent}\n  (matched text: ${CMAKE_MATCH_0})")
      print_excerpt()
      message(FATAL_ERROR "${KILN_CF_TARGET}: compile error matched a forbidden pattern")
    endif()
    message("compile-fail test ${KILN_CF_TARGET}: absent as required: ${absent}")
    continue()
  endif()
  if(NOT output MATCHES "${one}")
    message("compile-fail test ${KILN_CF_TARGET}: the build failed (${result}), but not with the expected error.")
    message("Expected a match for: ${one}")
    print_excerpt()
    message(FATAL_ERROR "${KILN_CF_TARGET}: compile error did not match")
  endif()
  message("compile-fail test ${KILN_CF_TARGET}: matched: ${CMAKE_MATCH_0}")
endforeach()
