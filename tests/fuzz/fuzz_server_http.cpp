// libFuzzer: the metrics endpoint's request-line parser (parse_http_request), on whatever
// a TCP client may send as a request head, and the answer built for what it parsed. The
// parser must never read past the head, and what it accepts must be a path the handler
// can safely see: starting with '/', no query, no space or control byte.
// Input: the request head bytes, as the connection hands them over (at most 8 KiB).
#include "http.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return -1;  // the connection never hands over more
  std::string_view head(reinterpret_cast<const char*>(data), size);
  keel::server::HttpRequest r = keel::server::parse_http_request(head);
  if (r.status == 0) {
    if (r.path.empty() || r.path[0] != '/') std::abort();
    for (char c : r.path) {
      if (c == '?' || static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) std::abort();
    }
  } else if (r.status != 400 && r.status != 405) {
    std::abort();
  }
  keel::server::HttpResponse answer{r.status == 0 ? 404 : r.status, "text/plain", r.path};
  std::string out = keel::server::format_http_response(answer, r.head_only);
  if (out.compare(0, 9, "HTTP/1.1 ") != 0) std::abort();
  return 0;
}
