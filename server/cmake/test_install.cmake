# Installs the build at KEEL_BUILD_DIR into a fresh prefix, then
#  - configures and builds the custom-rules example (server, replay tool, bot) against it
#    with find_package(Keel), plays a predicting bot against the example's server so the
#    hover rules run, and checks that the bot never disagreed with the server, that the
#    example's replay tool verifies the recording, and that stock keel-replay refuses it
#    clearly;
#  - builds client-sdk/examples/c_example.c (and draw_list_example.c) with the flags
#    pkg-config gives for keel-client (libkeel_client.so), and again with CMake and Keel::client_shared, and
#    runs both on the installed library;
#  - builds the pushball game module from games/pushball against the installed package
#    alone (and again with clang++-14 when it is there), checks with the installed
#    keel-sim that it reproduces the golden chain the in-tree module wrote, records a match of it with scripted players and verifies the
#    recording with the installed keel-replay loading the module.
# Run by ctest (keel_install_builds_custom_server); about 20 s after the build.
file(REMOVE_RECURSE ${KEEL_WORK_DIR})
set(prefix ${KEEL_WORK_DIR}/prefix)
set(example_build ${KEEL_WORK_DIR}/example-build)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected /${pattern}/ in:\n${text}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${KEEL_BUILD_DIR} --prefix ${prefix})
foreach(f lib/cmake/Keel/KeelConfig.cmake include/keel/server/server.h include/keel/protocol/messages_generated.h
        include/keel/scene/scene.h include/keel/scene/scene_generated.h include/keel/base/expected.h
        share/keel/scenes/demo.json share/doc/keel/operations.md
        include/keel/client/client.h include/keel/game/registry.h include/keel/game/module.h
        include/keel/games/sandbox.h bin/keel-replay bin/keel-sim bin/keel-bot
        include/keel/client/keel_client.h lib/libkeel_client.so lib/libkeel_client.so.1 lib/pkgconfig/keel-client.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S ${KEEL_EXAMPLE_DIR} -B ${example_build} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${example_build} -j2)
# One predicting bot plays the hover rules for 3 s; the server stops after 300 ticks. The
# scene is the installed one (the path the systemd unit uses, under this prefix).
run(sh ${CMAKE_CURRENT_LIST_DIR}/play_hover.sh ${example_build} ${prefix}/share/keel/scenes/demo.json ${KEEL_WORK_DIR})
# 3 s at 60 Hz is 180 ticks; the checkpoint and the frames in flight at the end cost a
# few dozen, so 100 confirmed ticks means the bot really predicted the match.
expect("${run_output}" "player [0-9]+ confirmed_ticks [0-9]+ hash_checks [0-9]+ hash_mismatches 0\n" "the hover bot")
string(REGEX MATCH "confirmed_ticks ([0-9]+)" _ "${run_output}")
if(CMAKE_MATCH_1 LESS 100)
  message(FATAL_ERROR "the hover bot confirmed only ${CMAKE_MATCH_1} ticks:\n${run_output}")
endif()
file(GLOB recordings ${KEEL_WORK_DIR}/recordings/*.krec)
list(LENGTH recordings count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "the custom server wrote ${count} recordings, expected its one match: ${recordings}")
endif()

run(${example_build}/keel-hover-replay info ${recordings})
expect("${run_output}" "game: hover version 1\n" "the recording's game")
expect("${run_output}" "players: 1 joined" "the bot in the recording")
# Every tick, the bot's join, inputs and leave included, re-runs to the recorded hash.
run(${example_build}/keel-hover-replay verify ${recordings})
# The server stops after 300 ticks; a recording holds its start state and every tick.
expect("${run_output}" "verified 30[0-9] ticks\n" "keel-hover-replay verify")
# keel-replay knows only the built-in rules: a clear refusal (exit 2), not a divergence.
execute_process(COMMAND ${prefix}/bin/keel-replay verify ${recordings} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "keel-replay verify on a hover recording exited ${rc}, expected 2:\n${out}${err}")
endif()
expect("${err}" "game \"hover\" is not known to this program \\(it knows: sandbox" "keel-replay's refusal")

# libkeel_client.so through pkg-config alone: the C example built with
#   cc c_example.c $(pkg-config --cflags --libs keel-client)
# and run (it checks the library's ABI at run time, then connects to nothing for 0.3 s).
find_program(KEEL_PKG_CONFIG pkg-config REQUIRED)
find_program(KEEL_CC NAMES cc gcc REQUIRED)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/lib/pkgconfig ${KEEL_PKG_CONFIG} --cflags --libs keel-client)
string(STRIP "${run_output}" pc_flags)
expect("${pc_flags}" "^-I${prefix}/lib/pkgconfig/../../include -L${prefix}/lib/pkgconfig/../../lib -lkeel_client$"
       "pkg-config --cflags --libs keel-client")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
set(c_example ${KEEL_WORK_DIR}/c_example)
run(${KEEL_CC} -std=c99 -Wall -Wextra -pedantic -Werror -o ${c_example} ${KEEL_SOURCE_DIR}/client-sdk/examples/c_example.c
    ${pc_flags})
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ${c_example})
expect("${run_output}" "libkeel_client [0-9]+\\.[0-9]+\\.[0-9]+, ABI 1\\.[0-9]+\n" "the pkg-config-built C example")
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ldd ${c_example})
expect("${run_output}" "libkeel_client\\.so\\.1 => ${prefix}/lib/libkeel_client\\.so\\.1" "the C example's libkeel_client")
# The engine-side draw-list example (a body table from the world description) builds the
# same way: the installed header and library are all an engine plugin needs. (It runs
# against a live server in tests/client/world_description_e2e_test.cpp.)
set(draw_list_example ${KEEL_WORK_DIR}/draw_list_example)
run(${KEEL_CC} -std=c99 -Wall -Wextra -pedantic -Werror -o ${draw_list_example}
    ${KEEL_SOURCE_DIR}/client-sdk/examples/draw_list_example.c ${pc_flags})
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ldd ${draw_list_example})
expect("${run_output}" "libkeel_client\\.so\\.1 => ${prefix}/lib/libkeel_client\\.so\\.1"
       "the draw-list example's libkeel_client")
# The same through the CMake package: Keel::client_shared, whose imported location gives
# the program its run path (no LD_LIBRARY_PATH).
set(shared_project ${KEEL_WORK_DIR}/client-shared-project)
file(WRITE ${shared_project}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(keel_c_client LANGUAGES C CXX)
find_package(Keel REQUIRED)
add_executable(c_example ${KEEL_SOURCE_DIR}/client-sdk/examples/c_example.c)
set_target_properties(c_example PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
target_link_libraries(c_example PRIVATE Keel::client_shared)
")
run(${CMAKE_COMMAND} -S ${shared_project} -B ${shared_project}/build -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${shared_project}/build)
run(${shared_project}/build/c_example)
expect("${run_output}" "libkeel_client [0-9]+\\.[0-9]+\\.[0-9]+, ABI 1\\.[0-9]+\n" "the C example linked with Keel::client_shared")

# A game module built against the installed package alone.
set(module_build ${KEEL_WORK_DIR}/pushball-build)
run(${CMAKE_COMMAND} -S ${KEEL_SOURCE_DIR}/games/pushball -B ${module_build} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${module_build} -j2)
set(module ${module_build}/pushball.so)
set(pitch ${KEEL_SOURCE_DIR}/games/pushball/pushball.json)
# The same bits as the module built inside the tree: its golden chain, 600 ticks of it.
run(${prefix}/bin/keel-sim determinism --game ${module} ${pitch} --golden ${KEEL_SOURCE_DIR}/tests/golden --ticks 600)
expect("${run_output}" "ok .*pushball.json" "the installed module's determinism check")
# Built by another compiler, the module still computes the same bits.
find_program(KEEL_CLANG clang++-14)
if(KEEL_CLANG)
  set(clang_build ${KEEL_WORK_DIR}/pushball-clang)
  run(${CMAKE_COMMAND} -S ${KEEL_SOURCE_DIR}/games/pushball -B ${clang_build} -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_CXX_COMPILER=${KEEL_CLANG} -DCMAKE_PREFIX_PATH=${prefix})
  run(${CMAKE_COMMAND} --build ${clang_build} -j2)
  run(${prefix}/bin/keel-sim determinism --game ${clang_build}/pushball.so ${pitch} --golden ${KEEL_SOURCE_DIR}/tests/golden
      --ticks 600 --threads 2 --restore-at 300)
  expect("${run_output}" "ok .*pushball.json" "the clang-built module's determinism check")
endif()
run(${prefix}/bin/keel-sim run ${pitch} --ticks 400 --hash-every 0 --record ${KEEL_WORK_DIR}/pushball.krec
    --bots 4 --game ${module})
run(${prefix}/bin/keel-replay --game ${module} info ${KEEL_WORK_DIR}/pushball.krec)
expect("${run_output}" "game: pushball version [0-9]+\n" "the module recording's game")
expect("${run_output}" "game module: pushball.so build [0-9a-f]+\n" "the module recording's build id")
run(${prefix}/bin/keel-replay --game ${module} verify ${KEEL_WORK_DIR}/pushball.krec)
expect("${run_output}" "verified 400 ticks\n" "keel-replay --game verify")
message(STATUS "installed to ${prefix}; the custom-rules server, replay tool and bot agree; "
               "the pushball module built against the package reproduces its golden and its recording")
