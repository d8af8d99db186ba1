# Installs the build at KEEL_BUILD_DIR into a fresh prefix, configures and builds the
# custom-rules example against it with find_package(Keel), and runs the example for a
# few ticks. Run by ctest (keel_install_builds_custom_server).
file(REMOVE_RECURSE ${KEEL_WORK_DIR})
set(prefix ${KEEL_WORK_DIR}/prefix)
set(example_build ${KEEL_WORK_DIR}/example-build)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${KEEL_BUILD_DIR} --prefix ${prefix})
foreach(f lib/cmake/Keel/KeelConfig.cmake include/keel/server/server.h include/keel/protocol/messages_generated.h
          share/keel/scenes/demo.json share/doc/keel/operations.md)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${KEEL_EXAMPLE_DIR} -B ${example_build} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${example_build} -j2)
# The custom server runs 30 ticks on loopback and stops by itself, on the installed scene
# (the path the systemd unit uses, under this prefix).
run(${example_build}/keel-hover-server --scene ${prefix}/share/keel/scenes/demo.json --bind 127.0.0.1:0
    --record ${KEEL_WORK_DIR}/recordings --stop-after-ticks 30 --status-interval 0 --log-level warn)
file(GLOB recordings ${KEEL_WORK_DIR}/recordings/*.krec)
if(NOT recordings)
  message(FATAL_ERROR "the custom server wrote no recording")
endif()
message(STATUS "installed to ${prefix}, built and ran the custom-rules example")
