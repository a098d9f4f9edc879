# The examples of kiln's Markdown docs, compiled and run as tests (label `docs`).
#
#   kiln_add_docs_test(<name> <file.md> [PROGRAMS_ONLY])     <file.md> relative to the project's root
#
# At configure time, every ```cpp block of <file.md> is extracted into one generated translation unit,
# <build>/tests/docs/<name>.cpp, built as the executable <name> and run as the CTest test <name>. Editing
# the Markdown file re-runs the configure step (CMAKE_CONFIGURE_DEPENDS); the generated file is rewritten
# only when its text changes, so nothing is rebuilt otherwise.
#
# The convention for a ```cpp block (other fences, ```python for JAX, ```text, ```cmake, are left alone):
#   - a block containing `int main()` is a complete program: it is put in a namespace of its own, its main
#     renamed, and run; it passes when it returns 0 (or falls off its end) without throwing;
#   - any other block is the body of a function, with `#include <kiln/kiln.hpp>`, `<cassert>` and
#     `using namespace kiln::literals;` in scope: it may declare variables, lambdas and local structs, and
#     it is run too (an exception fails the test), so it must define what it uses.
# With PROGRAMS_ONLY, only the complete programs are taken (for a file whose other blocks are excerpts that
# use names defined elsewhere, as README.md's). `#include` lines are moved to the top of the file. Each
# block is preceded by a #line directive, so a compile error or a failed assert points at the Markdown file
# and its line. The executable runs every block in order and prints `<file>:<line>: ok` per block (`threw:
# <what>`, `FAILED`); with a line number as its argument it runs that block only.
# Warnings are errors as in kiln's other tests, except the unused-value family (an example may compute a
# value only to show how it is spelled), and `assert` is on (NDEBUG is undefined): it checks what the text
# says.

function(kiln_add_docs_test name markdown)
  cmake_parse_arguments(PARSE_ARGV 2 arg "PROGRAMS_ONLY" "" "")
  if(NOT IS_ABSOLUTE "${markdown}")
    set(markdown "${PROJECT_SOURCE_DIR}/${markdown}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${markdown}")
  file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${markdown}")

  file(READ "${markdown}" text)
  # Lines are walked by position, never as a CMake list: C++ is full of ';' and '[', which lists mangle.
  set(includes "#include <kiln/kiln.hpp>\n#include <cassert>\n")
  set(bodies "")
  set(table "")
  set(in_block OFF)
  set(line_no 0)
  set(count 0)
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" eol)
    if(eol EQUAL -1)
      set(line "${text}")
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${eol} line)
      math(EXPR next "${eol} + 1")
      string(SUBSTRING "${text}" ${next} -1 text)
    endif()
    math(EXPR line_no "${line_no} + 1")

    if(NOT in_block)
      if(line MATCHES "^([ \t]*)```cpp[ \t]*$")
        set(in_block ON)
        set(indent "${CMAKE_MATCH_1}")
        string(LENGTH "${indent}" indent_length)
        math(EXPR first "${line_no} + 1")
        set(block "")
      endif()
    elseif(line MATCHES "^[ \t]*```[ \t]*$")
      set(in_block OFF)
      if(block MATCHES "int[ \t]+main[ \t]*\\(")
        math(EXPR count "${count} + 1")
        if(NOT block MATCHES "int[ \t]+main[ \t]*\\([ \t]*\\)")
          message(FATAL_ERROR "kiln: ${shown}:${first}: a complete program is `int main()`, without parameters")
        endif()
        # main may fall off its end (it returns 0 then): the renamed function deduces void or int.
        string(REGEX REPLACE "int[ \t]+main[ \t]*\\([ \t]*\\)" "auto kiln_docs_main()" block "${block}")
        string(APPEND bodies "namespace kiln_docs_block_${first} {\nusing namespace kiln::literals;\n"
                             "#line ${first} \"${markdown}\"\n${block}"
                             "int run() { return kiln_docs_call(&kiln_docs_main); }\n"
                             "}  // namespace kiln_docs_block_${first}\n\n")
        string(APPEND table "    {${first}, &kiln_docs_block_${first}::run},\n")
      elseif(NOT arg_PROGRAMS_ONLY)
        math(EXPR count "${count} + 1")
        string(APPEND bodies "namespace kiln_docs_block_${first} {\nint run() {\n"
                             "    using namespace kiln::literals;\n"
                             "#line ${first} \"${markdown}\"\n${block}"
                             "    return 0;\n}\n}  // namespace kiln_docs_block_${first}\n\n")
        string(APPEND table "    {${first}, &kiln_docs_block_${first}::run},\n")
      endif()
    else()
      # The block's own indentation (a block inside a list item) is removed.
      if(indent_length GREATER 0 AND line MATCHES "^${indent}")
        string(SUBSTRING "${line}" ${indent_length} -1 line)
      endif()
      if(line MATCHES "^[ \t]*#[ \t]*include")
        string(FIND "${includes}" "${line}\n" seen)
        if(seen EQUAL -1)
          string(APPEND includes "${line}\n")
        endif()
        set(line "")  # an empty line keeps the numbering of the #line directive
      endif()
      string(APPEND block "${line}\n")
    endif()
  endwhile()
  if(in_block)
    message(FATAL_ERROR "kiln: ${shown}: the ```cpp block from line ${first} is not closed")
  endif()
  if(count EQUAL 0)
    message(FATAL_ERROR "kiln: ${shown} has no ```cpp block to compile: remove it from the docs tests")
  endif()

  string(CONCAT source "// Generated by tests/docs/extract.cmake from ${shown}: edit the Markdown file, not this one.\n"
             "${includes}#include <cstdio>\n#include <cstdlib>\n#include <exception>\n#include <type_traits>\n\n"
             "// A program's main, renamed: its result, or 0 when it returns void (falls off its end).\n"
             "template <class F>\nint kiln_docs_call(F f) {\n"
             "    if constexpr (std::is_void_v<decltype(f())>) {\n        f();\n        return 0;\n"
             "    } else {\n        return f();\n    }\n}\n\n${bodies}"
             "#line 1 \"kiln_docs_main\"\n"
             "namespace {\nstruct kiln_docs_entry {\n    int line;\n    int (*run)();\n};\n"
             "constexpr kiln_docs_entry kiln_docs_blocks[] = {\n${table}};\n}  // namespace\n\n"
             "// Runs every block (or the one whose first line is argv[1]); nonzero if one fails or throws.\n"
             "int main(int argc, char** argv) {\n"
             "    int const only = argc > 1 ? std::atoi(argv[1]) : 0;\n"
             "    int failed = 0, ran = 0;\n"
             "    for (auto const& b : kiln_docs_blocks) {\n"
             "        if (only != 0 && b.line != only) continue;\n"
             "        ++ran;\n"
             "        int rc = 1;\n"
             "        try {\n"
             "            rc = b.run();\n"
             "        } catch (std::exception const& e) {\n"
             "            std::printf(\"${shown}:%d: threw: %s\\n\", b.line, e.what());\n"
             "        }\n"
             "        std::printf(\"${shown}:%d: %s\\n\", b.line, rc == 0 ? \"ok\" : \"FAILED\");\n"
             "        std::fflush(stdout);\n"
             "        failed += rc != 0;\n"
             "    }\n"
             "    if (ran == 0) std::printf(\"${shown}: no block starts at line %d\\n\", only);\n"
             "    return failed == 0 && ran > 0 ? 0 : 1;\n"
             "}\n")

  set(generated "${CMAKE_CURRENT_BINARY_DIR}/docs/${name}.cpp")
  file(WRITE "${generated}.new" "${source}")
  configure_file("${generated}.new" "${generated}" COPYONLY)  # touched only when the text changed
  file(REMOVE "${generated}.new")

  add_executable(${name} "${generated}")
  target_link_libraries(${name} PRIVATE kiln::kiln)
  kiln_dev_flags(${name})
  if(NOT MSVC)
    # After kiln_warnings' -Wall on the command line (clang takes the last of -Wall and -Wno-unused):
    # options of a linked interface library follow the target's own, in link order.
    if(NOT TARGET kiln_docs_flags)
      add_library(kiln_docs_flags INTERFACE)
      target_compile_options(kiln_docs_flags INTERFACE -Wno-unused)
    endif()
    target_link_libraries(${name} PRIVATE kiln_docs_flags)
    # -UNDEBUG comes after the build type's -DNDEBUG: the examples' asserts check what the text says.
    target_compile_options(${name} PRIVATE -UNDEBUG)
    # <kiln/kiln.hpp> precompiled with the same flags (tests/CMakeLists.txt, KILN_TEST_PCH).
    if(KILN_TEST_PCH)
      if(NOT TARGET kiln_docs_pch)
        add_library(kiln_docs_pch OBJECT "${PROJECT_SOURCE_DIR}/tests/pch.cpp")
        target_link_libraries(kiln_docs_pch PRIVATE kiln::kiln)
        kiln_dev_flags(kiln_docs_pch)
        target_link_libraries(kiln_docs_pch PRIVATE kiln_docs_flags)
        target_compile_options(kiln_docs_pch PRIVATE -UNDEBUG)
        target_precompile_headers(kiln_docs_pch PRIVATE <kiln/kiln.hpp> <cassert>)
      endif()
      target_precompile_headers(${name} REUSE_FROM kiln_docs_pch)
    endif()
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS docs TIMEOUT ${KILN_TEST_TIMEOUT})
endfunction()
