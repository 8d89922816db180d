# make install PREFIX=DIR: the kron binary, headers, libraries, pkg-config file and CMake package.
include(CMakePackageConfigHelpers)
install(DIRECTORY include/kron DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${KRON_INSTALL_TARGETS} EXPORT kronTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kronTargets NAMESPACE kron:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kron)
configure_package_config_file(cmake/kronConfig.cmake.in ${PROJECT_BINARY_DIR}/kronConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kron)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kronConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kronConfig.cmake ${PROJECT_BINARY_DIR}/kronConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kron)
# The .pc files name the prefix relative to their own folder (LIBDIR/pkgconfig -> prefix).
file(RELATIVE_PATH KRON_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(KRON_PC_OTF2 "")
if(KRON_WITH_OTF2)
  set(KRON_PC_OTF2 " otf2")
endif()
foreach(pc kron kron-probe kron-functions)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
