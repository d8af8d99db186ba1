# Writes a C++ source that holds a text file as a string, so the library can hand the
# FlatBuffers IDL parser its schema at runtime without the .fbs file being installed.
# Run as: cmake -DINPUT=a.fbs -DOUTPUT=a_text.cpp -DFUNCTION=name -DNAMESPACE=ns -P embed_text.cmake
# The source defines `std::string_view ns::name()`, returning the file's bytes.
#
# The text goes in as a byte array, not a raw string literal, so no delimiter can clash
# with the schema's contents and no compiler limit on literal length applies.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR byte_count "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Break the array into lines of 16 bytes to keep the generated file readable (CMake's
# regular expressions have no {n} repetition, hence string(REPEAT)).
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line_pattern)
string(REGEX REPLACE "(${line_pattern})" "\\1\n    " bytes "${bytes}")
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${input_name} by cmake/embed_text.cmake. Do not edit.
#include <string_view>

namespace ${NAMESPACE} {
namespace {
// unsigned: bytes above 0x7f (UTF-8 in comments) would narrow into a signed char.
const unsigned char kBytes[] = {
    ${bytes}
    0};
}  // namespace

std::string_view ${FUNCTION}() {
  return std::string_view(reinterpret_cast<const char*>(kBytes), ${byte_count});
}
}  // namespace ${NAMESPACE}
")
# Only touch the output when it changed, so an unrelated edit does not rebuild the library.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
