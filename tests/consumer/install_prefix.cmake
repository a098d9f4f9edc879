# Fixture of the consumer tests: installs the kiln build tree into a fresh prefix.
#   cmake -DKILN_BUILD_DIR=<build> -DKILN_PREFIX=<prefix> [-DKILN_CONFIG=<config>] -P install_prefix.cmake
cmake_minimum_required(VERSION 3.20)

foreach(var IN ITEMS KILN_BUILD_DIR KILN_PREFIX)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_prefix.cmake: ${var} is not set")
  endif()
endforeach()

# Fresh every time: a header removed from the source tree must not linger in the prefix.
file(REMOVE_RECURSE "${KILN_PREFIX}")

set(config_args "")
if(DEFINED KILN_CONFIG AND NOT KILN_CONFIG STREQUAL "")
  set(config_args --config "${KILN_CONFIG}")
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${KILN_BUILD_DIR}" --prefix "${KILN_PREFIX}" ${config_args}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${KILN_BUILD_DIR} --prefix ${KILN_PREFIX} failed: ${result}")
endif()

foreach(file IN ITEMS include/kiln/kiln.hpp include/kiln/version.hpp)
  if(NOT EXISTS "${KILN_PREFIX}/${file}")
    message(FATAL_ERROR "install_prefix.cmake: ${file} was not installed into ${KILN_PREFIX}")
  endif()
endforeach()
file(GLOB_RECURSE configs "${KILN_PREFIX}/*/kilnConfig.cmake")
if(NOT configs)
  message(FATAL_ERROR "install_prefix.cmake: no kilnConfig.cmake under ${KILN_PREFIX}")
endif()
message("kiln installed into ${KILN_PREFIX}; package: ${configs}")
