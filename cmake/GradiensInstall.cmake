# Installs the libraries, the public headers (under include/gradiens, keeping
# their folders) and a package config, so find_package(gradiens) works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS gradiens gradiens_torch_compat gradiens_nn gradiens_optim gradiens_data gradiens_pinn gradiens_engine gradiens_kernels
  EXPORT gradiensTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# gradiens-train and the library it runs on (not part of the exported targets).
install(TARGETS gradiens_train gradiens-train
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES gradiens.h DESTINATION include/gradiens)
foreach(dir kernels engine nn optim data pinn)
  install(DIRECTORY ${dir}/ DESTINATION include/gradiens/${dir} FILES_MATCHING PATTERN "*.h")
endforeach()
install(DIRECTORY compat/include/ DESTINATION include/gradiens/compat)
install(EXPORT gradiensTargets NAMESPACE gradiens:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gradiens)
# The build tree is a package too: find_package(gradiens) with gradiens_DIR=<build dir>.
export(EXPORT gradiensTargets NAMESPACE gradiens:: FILE ${PROJECT_BINARY_DIR}/gradiensTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gradiensConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gradiensConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gradiens)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gradiensConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gradiensConfig.cmake ${PROJECT_BINARY_DIR}/gradiensConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gradiens)
