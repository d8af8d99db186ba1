#include "json_scan.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace keel::scene::detail {
namespace {

// Deeper than this the FlatBuffers parser (limit 64) has already given up; stopping here
// keeps the walk's own stack small on a file of a billion '['.
constexpr size_t kMaxDepth = 128;

struct Frame {
  bool is_array = false;
  bool expecting_key = false;  // objects: the next string is a key
  std::string_view key;        // objects: the key whose value is being read
  size_t elements = 0;         // arrays: values started so far
  size_t start_line = 1;
};

bool is_delimiter(char c) {
  return c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']' || c == '"' ||
         c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/// Walks tokens left to right, keeping the stack of open objects and arrays. Callers
/// drive it with next() and look at frames() between tokens.
class Walker {
 public:
  /// With `track_completed`, the walker also remembers where the last finished value
  /// sat (costs a small copy per ',' '}' ']', so only error reporting asks for it).
  explicit Walker(std::string_view text, bool track_completed = false)
      : text_(text), track_completed_(track_completed) {}

  size_t position() const { return pos_; }
  const std::vector<Frame>& frames() const { return frames_; }

  /// Where the parser's error most likely is. The FlatBuffers parser checks some things
  /// (a struct's field count, integer ranges) only once a value is complete, after it has
  /// read the next token: when the last token was ',', '}' or ']', the value in error is
  /// the one that token finished, not the one after it.
  const std::vector<Frame>& error_frames() const {
    return last_was_punctuation_ ? completed_ : frames_;
  }

  /// Consumes one token (or comment). Returns the offset where a value starts if this
  /// token started one, npos otherwise. Returns false at the end or when too deep.
  bool next(size_t& value_start) {
    value_start = std::string_view::npos;
    skip_space();
    if (pos_ >= text_.size() || frames_.size() > kMaxDepth) return false;
    const char c = text_[pos_];
    last_was_punctuation_ = c == ',' || c == '}' || c == ']';
    switch (c) {
      case '{':
      case '[':
        value_start = begin_value();
        frames_.push_back(Frame{c == '[', c == '{', {}, 0, line_});
        ++pos_;
        break;
      case '}':
      case ']':
        if (!frames_.empty()) frames_.pop_back();
        remember_completed();  // the parent, still keyed on the container just closed
        ++pos_;
        break;
      case ',':
        remember_completed();  // before the key is cleared
        if (!frames_.empty() && !frames_.back().is_array) {
          frames_.back().expecting_key = true;
          frames_.back().key = {};
        }
        ++pos_;
        break;
      case ':':
        ++pos_;
        break;
      case '"':
        value_start = read_string();
        break;
      default:
        value_start = read_bare();
        break;
    }
    return true;
  }

 private:
  void remember_completed() {
    if (track_completed_) completed_ = frames_;
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        skip_block_comment();
      } else {
        return;
      }
    }
  }

  void skip_block_comment() {
    pos_ += 2;
    while (pos_ < text_.size() &&
           !(text_[pos_] == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/')) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    pos_ = std::min(pos_ + 2, text_.size());
  }

  /// Marks a value starting at pos_ in the enclosing frame and returns pos_.
  size_t begin_value() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().elements;
    return pos_;
  }

  /// A string is an object key or a value, depending on where it stands.
  size_t read_string() {
    const size_t start = pos_;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') {
        ++pos_;  // skip the escaped character
      } else if (text_[pos_] == '\n') {
        ++line_;
      }
      ++pos_;
    }
    const std::string_view contents =
        text_.substr(start + 1, std::min(pos_, text_.size()) - start - 1);
    pos_ = std::min(pos_ + 1, text_.size());
    return take_key_or_value(contents, start);
  }

  /// Numbers, true/false/null, nan/inf, and (in lenient JSON) unquoted keys.
  size_t read_bare() {
    const size_t start = pos_;
    while (pos_ < text_.size() && !is_delimiter(text_[pos_])) ++pos_;
    if (pos_ == start) ++pos_;  // a lone '/' that starts no comment: step over it
    return take_key_or_value(text_.substr(start, pos_ - start), start);
  }

  size_t take_key_or_value(std::string_view token, size_t start) {
    if (!frames_.empty() && frames_.back().expecting_key) {
      frames_.back().key = token;
      frames_.back().expecting_key = false;
      return std::string_view::npos;
    }
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().elements;
    return start;
  }

  std::string_view text_;
  bool track_completed_ = false;
  size_t pos_ = 0;
  size_t line_ = 1;
  std::vector<Frame> frames_;
  std::vector<Frame> completed_;
  bool last_was_punctuation_ = false;
};

/// The path of the value being read, from frames[first] on: colliders[0].radius.
std::string path_of(const std::vector<Frame>& frames, size_t first) {
  std::string path;
  for (size_t i = first; i < frames.size(); ++i) {
    const Frame& frame = frames[i];
    if (frame.is_array) {
      // Appended piecewise: "[" + to_string(..) trips a false -Wrestrict in gcc 12.
      path += '[';
      path += std::to_string(frame.elements == 0 ? 0 : frame.elements - 1);
      path += ']';
    } else if (!frame.key.empty()) {
      if (!path.empty()) path += ".";
      path += frame.key;
    }
  }
  return path;
}

/// True when the frames are inside root.bodies[i]; sets *index to i.
bool inside_body(const std::vector<Frame>& frames, size_t* index) {
  if (frames.size() < 2 || frames[0].is_array || frames[0].key != "bodies" || !frames[1].is_array ||
      frames[1].elements == 0) {
    return false;
  }
  *index = frames[1].elements - 1;
  return true;
}

/// Finds the "id" written directly in bodies[index], if it is a plain number.
std::optional<uint32_t> find_body_id(std::string_view json, size_t index) {
  Walker walker(json);
  size_t value_start = 0;
  while (walker.next(value_start)) {
    if (value_start == std::string_view::npos) continue;
    const auto& frames = walker.frames();
    size_t body = 0;
    if (!inside_body(frames, &body)) continue;
    if (body > index) return std::nullopt;  // walked past it
    if (body == index && frames.size() == 3 && frames[2].key == "id") {
      uint32_t id = 0;
      const char* first = json.data() + value_start;
      const char* last = json.data() + walker.position();
      if (first < last && *first == '"') {  // the parser accepts "12" too
        ++first;
        --last;
      }
      const auto result = std::from_chars(first, last, id);
      if (result.ec == std::errc() && result.ptr == last) return id;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ArrayTooLong> find_long_array(std::string_view json, size_t max_elements) {
  Walker walker(json);
  size_t value_start = 0;
  while (walker.next(value_start)) {
    const auto& frames = walker.frames();
    if (!frames.empty() && frames.back().is_array && frames.back().elements > max_elements) {
      return ArrayTooLong{frames.back().start_line, frames.back().elements};
    }
  }
  return std::nullopt;
}

JsonLocation locate(std::string_view json, size_t offset) {
  Walker walker(json, /*track_completed=*/true);
  size_t value_start = 0;
  while (walker.position() < offset && walker.next(value_start)) {
  }
  const std::vector<Frame>& frames = walker.error_frames();
  JsonLocation location;
  size_t body = 0;
  if (inside_body(frames, &body)) {
    location.path = path_of(frames, 2);
    location.body = body;
    location.body_id = find_body_id(json, body);
  } else {
    location.path = path_of(frames, 0);
  }
  return location;
}

}  // namespace keel::scene::detail
