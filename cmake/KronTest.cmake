# kron_add_test(NAME SOURCES... [LABELS label...] [LIBS lib...])
# One GoogleTest executable per unit; every test in it is registered with CTest under the labels
# (unit, vector, golden, stress, fuzz, tool) so that `ctest -L vector` selects a kind.
function(kron_add_test name)
  cmake_parse_arguments(KT "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${KT_SOURCES} ${KT_UNPARSED_ARGUMENTS})
  kron_warnings(${name})
  target_link_libraries(${name} PRIVATE kron::kron GTest::gtest_main GTest::gmock ${KT_LIBS})
  target_compile_definitions(${name} PRIVATE
    KRON_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KRON_BINARY_DIR="${PROJECT_BINARY_DIR}")
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
