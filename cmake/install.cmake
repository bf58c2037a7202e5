# cmake --install: the library, the public headers (include/loom/ only), the `loom` tool, and a
# CMake package, so that consumers write
#   find_package(loom 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE loom::loom)
include(CMakePackageConfigHelpers)

set(loom_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/loom)

install(TARGETS loom EXPORT loomTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/loom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/loom/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/loom)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/loom)
if(TARGET loom_cli)
  install(TARGETS loom_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT loomTargets NAMESPACE loom:: DESTINATION ${loom_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/loomConfig.cmake.in
  ${PROJECT_BINARY_DIR}/loomConfig.cmake INSTALL_DESTINATION ${loom_cmake_dir})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/loomConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/loomConfig.cmake ${PROJECT_BINARY_DIR}/loomConfigVersion.cmake
  DESTINATION ${loom_cmake_dir})
