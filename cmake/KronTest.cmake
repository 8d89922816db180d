# kron_add_test(NAME SOURCES... [LABELS label...] [LIBS lib...])
# One GoogleTest executable per unit; every test in it is registered with CTest under the labels
# (unit, vector, golden, stress, fuzz, tool) so that `ctest -L vector` selects a kind.
# GoogleTest's headers are parsed once, into a precompiled header every test executable reuses.
function(kron_test_common target)
  kron_warnings(${target})
  # One code model for the carrier (an object library) and the executables that reuse its PCH.
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_link_libraries(${target} PRIVATE kron::kron GTest::gtest_main GTest::gmock)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # tests/support/
  target_compile_definitions(${target} PRIVATE
    KRON_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KRON_BINARY_DIR="${PROJECT_BINARY_DIR}")
endfunction()
# The carrier has a C file too, because some tests mix in C sources (the C probe API).
file(WRITE ${PROJECT_BINARY_DIR}/kron_test_pch.cpp "// precompiled-header carrier for the tests\n")
file(WRITE ${PROJECT_BINARY_DIR}/kron_test_pch_c.c "/* precompiled-header carrier for C test sources */\nint kron_test_pch_c;\n")
add_library(kron_test_pch OBJECT ${PROJECT_BINARY_DIR}/kron_test_pch.cpp ${PROJECT_BINARY_DIR}/kron_test_pch_c.c)
kron_test_common(kron_test_pch)
target_precompile_headers(kron_test_pch PRIVATE
  "$<$<COMPILE_LANGUAGE:CXX>:<gtest/gtest.h$<ANGLE-R>>" "$<$<COMPILE_LANGUAGE:CXX>:<gmock/gmock.h$<ANGLE-R>>"
  "$<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>" "$<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>"
  "$<$<COMPILE_LANGUAGE:C>:<stdint.h$<ANGLE-R>>")

function(kron_add_test name)
  cmake_parse_arguments(KT "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${KT_SOURCES} ${KT_UNPARSED_ARGUMENTS})
  kron_test_common(${name})
  target_link_libraries(${name} PRIVATE ${KT_LIBS})
  target_precompile_headers(${name} REUSE_FROM kron_test_pch)
  if(NOT KT_LABELS)
    set(KT_LABELS unit)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${KT_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

# kron_add_tool_test(NAME COMMAND... [LABELS ...]): a shell-level test of the kron binary.
function(kron_add_tool_test name)
  cmake_parse_arguments(KT "" "" "COMMAND;LABELS" ${ARGN})
  add_test(NAME ${name} COMMAND ${KT_COMMAND})
  if(NOT KT_LABELS)
    set(KT_LABELS tool)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${KT_LABELS}"
    ENVIRONMENT "KRON=$<TARGET_FILE:kron-cli>;KRON_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# kron_add_sim_golden(NAME GOLDEN SCRIPT [kron sim options...]): `kron sim OPTIONS SCRIPT` must print
# GOLDEN exactly (paths relative to the source tree), through the one harness tests/sim/golden.sh
# (KRON_UPDATE_GOLDEN=1 rewrites GOLDEN). Labels golden and tool.
function(kron_add_sim_golden name golden script)
  kron_add_tool_test(${name} COMMAND bash ${PROJECT_SOURCE_DIR}/tests/sim/golden.sh ${golden} ${script} ${ARGN}
    LABELS golden tool)
endfunction()
