# The symbol tables of libkeel_client.so and of a game module, read from the files with
# Debian's binutils (nm, readelf):
#  - libkeel_client.so defines, in its dynamic symbol table, keel_* names only (the C
#    API), among them the ones every binding needs; its SONAME is libkeel_client.so.MAJOR,
#    MAJOR being keel_client.h's KEEL_CLIENT_ABI_VERSION_MAJOR; and it needs no symbol of
#    Keel's from outside (no undefined keel name);
#  - the module exports its entry point keel_game_module alone and needs no symbol of
#    Keel's from the program that loads it.
# Run by ctest (client.shared_library_symbols) with -DLIBRARY=... -DMODULE=... -DHEADER=...
cmake_minimum_required(VERSION 3.25)
find_program(NM nm REQUIRED)
find_program(READELF readelf REQUIRED)

function(dynamic_symbols file mode out)
  execute_process(COMMAND ${NM} -D ${mode} ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm -D ${mode} ${file} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    # "ADDRESS TYPE NAME" (defined) or "U NAME" (undefined); a versioned name ends in @...
    if(line MATCHES "([^ ]+)$")
      string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_1}")
      list(APPEND names "${name}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# A C++ name of Keel's mangles its namespace as "4keel" (_ZN4keel..., _ZNK4keel..., typeinfo).
function(expect_no_keel_undefined file)
  dynamic_symbols(${file} --undefined-only undefined)
  foreach(name IN LISTS undefined)
    if(name MATCHES "4keel" OR name MATCHES "^keel_")
      message(FATAL_ERROR "${file} needs ${name} from the program that loads it")
    endif()
  endforeach()
endfunction()

dynamic_symbols(${LIBRARY} --defined-only exported)
list(LENGTH exported count)
foreach(name IN LISTS exported)
  if(NOT name MATCHES "^keel_")
    message(FATAL_ERROR "${LIBRARY} exports ${name}, which is not part of the C API (keel_*)")
  endif()
endforeach()
# Every function keel_client.h declares (a line "TYPE keel_NAME(" that is not static
# inline, which is compiled into the caller) is exported.
file(STRINGS ${HEADER} declarations REGEX "^[a-z0-9_ *]*[ *]keel_[a-z0-9_]+\\(")
set(declared "")
foreach(line IN LISTS declarations)
  if(line MATCHES "^static inline")
    continue()
  endif()
  string(REGEX MATCH "keel_[a-z0-9_]+\\(" name "${line}")
  string(REPLACE "(" "" name "${name}")
  list(APPEND declared ${name})
endforeach()
list(LENGTH declared declared_count)
if(declared_count LESS 30)
  message(FATAL_ERROR "found only ${declared_count} declarations in ${HEADER}: ${declared}")
endif()
foreach(name IN LISTS declared)
  if(NOT name IN_LIST exported)
    message(FATAL_ERROR "${LIBRARY} does not export ${name}, which keel_client.h declares")
  endif()
endforeach()
expect_no_keel_undefined(${LIBRARY})

file(STRINGS ${HEADER} major_line REGEX "^#define KEEL_CLIENT_ABI_VERSION_MAJOR [0-9]+$")
string(REGEX MATCH "[0-9]+$" major "${major_line}")
execute_process(COMMAND ${READELF} -d ${LIBRARY} RESULT_VARIABLE rc OUTPUT_VARIABLE dynamic)
if(NOT rc EQUAL 0 OR NOT dynamic MATCHES "\\(SONAME\\) +Library soname: \\[([^]]+)\\]")
  message(FATAL_ERROR "readelf -d ${LIBRARY} shows no SONAME:\n${dynamic}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL "libkeel_client.so.${major}")
  message(FATAL_ERROR "${LIBRARY}'s SONAME is ${CMAKE_MATCH_1}, expected libkeel_client.so.${major}")
endif()

dynamic_symbols(${MODULE} --defined-only module_exports)
if(NOT module_exports STREQUAL "keel_game_module")
  message(FATAL_ERROR "${MODULE} exports ${module_exports}; a module exports keel_game_module alone")
endif()
expect_no_keel_undefined(${MODULE})
message(STATUS "${LIBRARY}: ${count} symbols, all keel_*, SONAME libkeel_client.so.${major}; "
               "${MODULE}: keel_game_module only, no Keel symbol needed from its host")
