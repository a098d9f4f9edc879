# The compiler launcher of the compile-fail tests' objects (see kiln_add_compile_fail in tests/CMakeLists.txt):
#   cmake -DKILN_CF_LOG=<file> -DKILN_CF_EXPECT=<fail|ok> -P compile_fail_launcher.cmake -- <compiler> <args>...
# Runs the compile and writes its exit status (first line) and its output (stdout and stderr, in order) to
# <file>, which the test reads. With KILN_CF_EXPECT=fail the build goes on whatever the compiler says; with
# KILN_CF_EXPECT=ok the compiler's own exit status is the launcher's.
# So the compiles happen in the build, in parallel, and the tests build nothing.
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS KILN_CF_LOG KILN_CF_EXPECT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "compile_fail_launcher.cmake: ${var} is not set")
  endif()
endforeach()

# The command: every argument after "--".
set(command "")
set(object "")
set(after_dash FALSE)
set(after_o FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  set(arg "${CMAKE_ARGV${i}}")
  if(after_dash)
    list(APPEND command "${arg}")
    if(after_o)
      set(object "${arg}")
      set(after_o FALSE)
    elseif(arg STREQUAL "-o")
      set(after_o TRUE)
    endif()
  elseif(arg STREQUAL "--")
    set(after_dash TRUE)
  endif()
endforeach()
if(command STREQUAL "")
  message(FATAL_ERROR "compile_fail_launcher.cmake: no command after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
file(WRITE "${KILN_CF_LOG}" "${result}\n${output}")

if(KILN_CF_EXPECT STREQUAL "ok")
  if(NOT output STREQUAL "")
    message("${output}")
  endif()
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "compile failed (${result}): ${KILN_CF_LOG}")
  endif()
endif()
# The object file is touched (created empty if the compiler made none: a failed compile, or -fsyntax-only),
# so the build tool counts it as built, newer than its inputs, until its source or flags change; no object
# of these tests is ever linked.
if(NOT object STREQUAL "")
  file(TOUCH "${object}")
endif()
