# `cmake --install` for Keel: headers (each module's include/ folder plus the generated
# FlatBuffers headers), the static libraries, and a KeelConfig.cmake so that
#   find_package(Keel REQUIRED)
#   target_link_libraries(my-server PRIVATE Keel::server)
# builds a server with custom rules against an installed Keel; Keel::replay and
# Keel::client give the same user a replay tool and predicting clients with those rules,
# and Keel::recording reads and writes recordings without the replay tool.
# Included from server/CMakeLists.txt because the server is what such users build.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KEEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)

# The other modules only declare their build-tree include folders; installed consumers
# find the same headers under <prefix>/include.
foreach(target keel_base keel_sim keel_game keel_sandbox keel_scene keel_protocol keel_recording keel_replay keel_client)
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
target_include_directories(keel_xxhash INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(keel_base PROPERTIES EXPORT_NAME base)
set_target_properties(keel_sim PROPERTIES EXPORT_NAME sim)
set_target_properties(keel_game PROPERTIES EXPORT_NAME game)
set_target_properties(keel_sandbox PROPERTIES EXPORT_NAME sandbox)
set_target_properties(keel_scene PROPERTIES EXPORT_NAME scene)
set_target_properties(keel_protocol PROPERTIES EXPORT_NAME protocol)
set_target_properties(keel_recording PROPERTIES EXPORT_NAME recording)
set_target_properties(keel_replay PROPERTIES EXPORT_NAME replay)
set_target_properties(keel_client PROPERTIES EXPORT_NAME client)
set_target_properties(keel_xxhash PROPERTIES EXPORT_NAME xxhash)

install(TARGETS keel_base keel_sim keel_game keel_sandbox keel_scene keel_protocol keel_recording keel_replay keel_client keel_server keel_xxhash
        EXPORT KeelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS keel-server RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET keel-bot)
  install(TARGETS keel-bot RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# keel-sim (tools/, added after this file) installs itself there.
if(TARGET keel-replay)
  install(TARGETS keel-replay RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET keel-token)
  install(TARGETS keel-token RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(module base sim game games/sandbox scene protocol replay/format replay/tool client-sdk server)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/include/keel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
foreach(module scene protocol)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${module}/generated/keel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
endforeach()
# The scenes keel-server runs and the operator's documents, where the systemd unit
# (deploy/systemd/keel-server.service: <prefix>/share/keel/scenes/demo.json) and the image
# look for them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/keel/scenes
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/keel
        FILES_MATCHING PATTERN "*.md")

# libkeel_client.so (client-sdk/CMakeLists.txt): the C API for engines and FFIs, as
# Keel::client_shared in the package and keel-client.pc for pkg-config. The .pc file
# finds its prefix from where it lies (${pcfiledir}), so an installed tree may be moved.
if(TARGET keel_client_shared)
  target_include_directories(keel_client_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set_target_properties(keel_client_shared PROPERTIES EXPORT_NAME client_shared)
  install(TARGETS keel_client_shared EXPORT KeelTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  string(REGEX REPLACE "[^/]+" ".." KEEL_PC_TO_PREFIX "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/keel-client.pc.in ${CMAKE_CURRENT_BINARY_DIR}/keel-client.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/keel-client.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

install(EXPORT KeelTargets NAMESPACE Keel:: DESTINATION ${KEEL_INSTALL_CMAKEDIR})
string(JOIN " " KEEL_DETERMINISM_FLAGS_LIST ${KEEL_DETERMINISM_FLAGS})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/KeelConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake
                              INSTALL_DESTINATION ${KEEL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
              ${KEEL_GAME_MODULE_VERSION_SCRIPT}
        DESTINATION ${KEEL_INSTALL_CMAKEDIR})

# The test: install into a fresh prefix, build server/examples/custom_rules and the
# pushball game module against it.
# Added at the end of the top-level directory, where enable_testing() has run.
function(keel_add_install_test)
  if(NOT KEEL_BUILD_TESTS)
    return()
  endif()
  add_test(NAME keel_install_builds_custom_server
           COMMAND ${CMAKE_COMMAND}
                   -DKEEL_BUILD_DIR=${PROJECT_BINARY_DIR}
                   -DKEEL_EXAMPLE_DIR=${PROJECT_SOURCE_DIR}/server/examples/custom_rules
                   -DKEEL_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DKEEL_WORK_DIR=${PROJECT_BINARY_DIR}/test-install
                   -P ${PROJECT_SOURCE_DIR}/server/cmake/test_install.cmake)
  set_tests_properties(keel_install_builds_custom_server PROPERTIES TIMEOUT 600 LABELS "install")
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL keel_add_install_test)
