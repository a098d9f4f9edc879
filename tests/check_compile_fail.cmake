# Runs one compile-fail test (see kiln_add_compile_fail in tests/CMakeLists.txt) from the log its compile
# left in the build (tests/compile_fail_launcher.cmake: exit status on the first line, then the output):
#   cmake -DKILN_CF_LOG=<log> -DKILN_CF_EXPECT=ok -P check_compile_fail.cmake
#       passes only if the compile succeeded (the "ok" variant);
#   cmake -DKILN_CF_LOG=<log> -DKILN_CF_EXPECT=fail -DKILN_CF_REGEX_FILE=<file> -P check_compile_fail.cmake
#       passes only if the compile FAILED and its output matches the regex stored in <file> (several joined
#       by "&&&" must all match; one prefixed with "!" must not match: see below).
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS KILN_CF_LOG KILN_CF_EXPECT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_compile_fail.cmake: ${var} is not set")
  endif()
endforeach()
get_filename_component(target "${KILN_CF_LOG}" NAME_WE)

if(NOT EXISTS "${KILN_CF_LOG}")
  message(FATAL_ERROR "${target}: no compile log ${KILN_CF_LOG}: build the tests first (cmake --build)")
endif()
file(READ "${KILN_CF_LOG}" log)
string(FIND "${log}" "\n" newline)
string(SUBSTRING "${log}" 0 ${newline} result)
math(EXPR start "${newline} + 1")
string(SUBSTRING "${log}" ${start} -1 output)

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
    message("Compiler output (first ${limit} of ${length} characters):\n${head}\n[...]")
  else()
    message("Compiler output:\n${output}")
  endif()
endfunction()

if(KILN_CF_EXPECT STREQUAL "ok")
  if(NOT result EQUAL 0)
    print_excerpt()
    message(FATAL_ERROR "${target}: the source must compile, but the compiler exited with ${result}")
  endif()
  message("${target}: compiled")
  return()
endif()

if(NOT DEFINED KILN_CF_REGEX_FILE OR KILN_CF_REGEX_FILE STREQUAL "")
  message(FATAL_ERROR "check_compile_fail.cmake: KILN_CF_REGEX_FILE is not set")
endif()
file(READ "${KILN_CF_REGEX_FILE}" regex)
if(result EQUAL 0)
  message("compile-fail test ${target}: the source COMPILED, but it must not.")
  print_excerpt()
  message(FATAL_ERROR "${target}: expected a compile error matching: ${regex}")
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
      message("compile-fail test ${target}: the compile failed (${result}), but with an error that must not appear.")
      message("Matched the forbidden pattern: ${absent}\n  (matched text: ${CMAKE_MATCH_0})")
      print_excerpt()
      message(FATAL_ERROR "${target}: compile error matched a forbidden pattern")
    endif()
    message("compile-fail test ${target}: absent as required: ${absent}")
    continue()
  endif()
  if(NOT output MATCHES "${one}")
    message("compile-fail test ${target}: the compile failed (${result}), but not with the expected error.")
    message("Expected a match for: ${one}")
    print_excerpt()
    message(FATAL_ERROR "${target}: compile error did not match")
  endif()
  message("compile-fail test ${target}: matched: ${CMAKE_MATCH_0}")
endforeach()
