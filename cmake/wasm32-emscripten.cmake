# Cross-compiling to WebAssembly (wasm32) with Debian's emscripten (3.1.6: clang-14, lld-14,
# binaryen). Used by scripts/determinism.sh for the runner in tools/keel-detrun, which is
# linked as a .js/.wasm pair that node runs (docs/determinism.md, "wasm32"). Run cmake with
# the environment of scripts/emscripten-env.sh (a writable cache in the build folder).
#
#   cmake -S tools/keel-detrun -B DIR --toolchain $PWD/cmake/wasm32-emscripten.cmake
if(NOT DEFINED EMSCRIPTEN_ROOT_PATH)
  find_program(KEEL_EMCC emcc REQUIRED)
  execute_process(COMMAND em-config EMSCRIPTEN_ROOT OUTPUT_VARIABLE _keel_em_root
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _keel_em_status)
  if(NOT _keel_em_status EQUAL 0 OR NOT EXISTS "${_keel_em_root}/cmake/Modules/Platform/Emscripten.cmake")
    message(FATAL_ERROR "emscripten not found (em-config EMSCRIPTEN_ROOT said '${_keel_em_root}'); "
                        "scripts/setup.sh --determinism installs Debian's emscripten")
  endif()
  set(EMSCRIPTEN_ROOT_PATH "${_keel_em_root}")
endif()
include("${EMSCRIPTEN_ROOT_PATH}/cmake/Modules/Platform/Emscripten.cmake")

# Programs (flatc) come from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# The rounding rules pinned for this target, beside the -ffp-contract=off -fno-fast-math
# every Keel build adds:
#  - -mno-simd128: no wasm SIMD, so __SSE2__ stays undefined and the sim takes its portable
#    four-lane path (sim/src/math/float4.h), the one aarch64 also runs; clang-14 enables no
#    SIMD for wasm32 by default, this keeps a future default from changing that silently.
#  - wasm has no fused multiply-add instruction outside relaxed SIMD (not enabled), so
#    nothing can be contracted even where a flag were missing; -ffp-contract=off still
#    applies, and the flags guard checks it on every compile command.
set(CMAKE_C_FLAGS_INIT "-mno-simd128")
set(CMAKE_CXX_FLAGS_INIT "-mno-simd128")

# The runner as a node program:
#  - NODERAWFS: the program's files are the host's (scene files, golden folder);
#  - ENVIRONMENT=node, WASM_ASYNC_COMPILATION=0: the .wasm is read and compiled in place by
#    node, never fetch()ed (emscripten 3.1.6 would ask node 18+'s fetch() for a file path);
#  - EXIT_RUNTIME: main's return value is node's exit status and stdout is flushed;
#  - ALLOW_MEMORY_GROWTH: the heap grows with the scene instead of a fixed 16 MiB;
#  - --profiling-funcs: function names kept in the .wasm, so that llvm-nm can list what was
#    linked (the libm guard of scripts/determinism.sh); it only keeps the names.
# A project whose programs are not node programs (the wasm32 client, client-sdk/web/) sets
# KEEL_WASM_NODE_PROGRAM to OFF before project() and gives its own link flags.
if(NOT DEFINED KEEL_WASM_NODE_PROGRAM OR KEEL_WASM_NODE_PROGRAM)
  set(CMAKE_EXE_LINKER_FLAGS_INIT
      "-sNODERAWFS=1 -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 -sEXIT_RUNTIME=1 -sALLOW_MEMORY_GROWTH=1 --profiling-funcs")
endif()
