#include "yaml/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "yaml/fast_scan.h"

namespace tcsync {

const Node* Node::find(std::string_view key) const {
  for (auto& [k, v] : map)
    if (k.scalar == key) return &v;
  return nullptr;
}

const char* Node::type_name() const {
  switch (type) {
    case Type::Scalar:
      return "a scalar";
    case Type::Map:
      return "a mapping";
    case Type::Seq:
      return "a list";
  }
  return "?";
}

YamlReader::YamlReader(uint32_t file_id, Diagnostics& diags) : file_(file_id), diags_(diags) {}

YamlReader::~YamlReader() {
  if (thread_.joinable()) {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (libyaml_) yaml_parser_delete(&parser_);
}

bool YamlReader::open(const std::string& path, Parse how) {
  // A directory opens, and would read as an error libyaml calls invalid input.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    fd = -1;
    errno = EISDIR;
  }
  if (fd < 0) {
    diags_.error({file_, 0, 0}, std::string("cannot read file: ") + std::strerror(errno));
    failed_ = true;
    return false;
  }
  // Read whole, not mapped: a mapped file cut short while it is read (an
  // editor truncating it in place under watch) would kill the process with
  // SIGBUS instead of reading as an error. The copy costs ~1 ms per 10 MB.
  if (S_ISREG(st.st_mode) && st.st_size > 0) text_.reserve(static_cast<size_t>(st.st_size));
  for (;;) {
    size_t at = text_.size();
    text_.resize(at + 65536);
    ssize_t got = ::read(fd, text_.data() + at, 65536);
    text_.resize(at + static_cast<size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int err = errno;
      ::close(fd);
      diags_.error({file_, 0, 0}, std::string("cannot read file: ") + std::strerror(err));
      failed_ = true;
      return false;
    }
    if (got == 0) break;
  }
  input_ = text_;
  ::close(fd);
  open_ = true;
  start(how, input_.size());
  return true;
}

void YamlReader::open_string(std::string text, Parse how) {
  text_ = std::move(text);
  input_ = text_;
  open_ = true;
  start(how, text_.size());
}

void YamlReader::start(Parse how, size_t size) {
  size_ = size;
  if (fast_allowed_)
    fast_ = std::make_unique<FastScan>(input_, file_);
  else
    start_libyaml();
  for (auto& b : batches_) empty_.push_back(&b);
  if (how == Parse::Thread || (how == Parse::Auto && size >= kThreadFrom))
    thread_ = std::thread([this] { parse_loop(); });
}

void YamlReader::start_libyaml() {
  yaml_parser_initialize(&parser_);
  yaml_parser_set_input(&parser_, read_input, this);
  libyaml_ = true;
}

// libyaml's input, at most kFeed bytes a call. Its scanner keeps a possible
// simple key per open flow collection and walks all of them for every token,
// scanning ahead until it can decide: `[[[[...` costs the square of its depth
// before the first event reaches read_node's depth check (20k `[`: 1.6 s).
// Between two calls the nesting can have grown by at most kFeed, so refusing
// input once it is past kMaxDepth bounds that work to kFeed levels.
int YamlReader::read_input(void* data, unsigned char* buf, size_t size, size_t* got) {
  constexpr size_t kFeed = 4096;
  auto* self = static_cast<YamlReader*>(data);
  if (self->parser_.flow_level > kMaxDepth) {
    self->flow_too_deep_ = true;
    return 0;  // libyaml stops with a reader error, reported as nesting
  }
  size = std::min(size, kFeed);
  *got = std::min(size, self->input_.size() - self->text_pos_);
  std::memcpy(buf, self->input_.data() + self->text_pos_, *got);
  self->text_pos_ += *got;
  return 1;
}

SourceLoc YamlReader::loc_of_offset(size_t offset) const {
  std::string_view head = input_.substr(0, offset);
  uint32_t line = 1, col = 1;
  for (char c : head) {
    if (c == '\n')
      ++line, col = 1;
    else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++col;  // count characters, not bytes
  }
  return {file_, line, col};
}

// Parser side: touches only parser_, the batch it fills, and (under mu_) the
// lists. Errors travel as Ev::Error events, so the reader reports them in
// order, on its own thread, when it gets there.
bool YamlReader::parse_one(Event& ev) {
  ev.scalar.clear();
  ev.plain = true;
  auto fail = [&](SourceLoc loc, std::string msg) {
    ev.type = Ev::Error;
    ev.loc = loc;
    ev.scalar = std::move(msg);
    return false;
  };
  static const char* kNoAliases =
      "YAML anchors and aliases are not supported (they make files hard to review and can expand without bound)";
  for (;;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser_, &e)) {
      // libyaml's messages are good ("did not find expected key"); keep them.
      SourceLoc loc{file_, static_cast<uint32_t>(parser_.problem_mark.line + 1),
                    static_cast<uint32_t>(parser_.problem_mark.column + 1)};
      std::string msg = parser_.problem ? parser_.problem : "malformed YAML";
      if (parser_.context) msg = std::string(parser_.context) + ": " + msg;
      if (flow_too_deep_) {
        loc = {file_, static_cast<uint32_t>(parser_.mark.line + 1), static_cast<uint32_t>(parser_.mark.column + 1)};
        ev.offset = parser_.mark.index;
        return fail(loc, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      }
      if (parser_.error == YAML_READER_ERROR) {
        // Reader errors carry a byte offset, not a line: count lines up to it.
        msg = "invalid UTF-8 or control character in input (" + msg + ")";
        loc = loc_of_offset(parser_.problem_offset);
      } else if (size_ > 0 && parser_.problem_mark.index >= size_ && parser_.problem_mark.column == 0) {
        // The end of the input, on the line after the last newline: no
        // line to show. The end of the last line is where the file stops.
        loc = loc_of_offset(size_ - 1);
      }
      ev.offset = parser_.error == YAML_READER_ERROR ? parser_.problem_offset : parser_.problem_mark.index;
      return fail(loc, "malformed YAML: " + msg);
    }
    ev.loc = {file_, static_cast<uint32_t>(e.start_mark.line + 1), static_cast<uint32_t>(e.start_mark.column + 1)};
    ev.offset = e.start_mark.index;
    bool keep = true, more = true;
    switch (e.type) {
      case YAML_STREAM_START_EVENT:
        keep = false;
        break;
      case YAML_NO_EVENT:
      case YAML_STREAM_END_EVENT:
        ev.type = Ev::StreamEnd;
        more = false;
        break;
      case YAML_DOCUMENT_START_EVENT:
        ev.type = Ev::DocStart;
        break;
      case YAML_DOCUMENT_END_EVENT:
        ev.type = Ev::DocEnd;
        break;
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT:
        ev.type = e.type == YAML_MAPPING_START_EVENT ? Ev::MapStart : Ev::SeqStart;
        if (e.type == YAML_MAPPING_START_EVENT ? e.data.mapping_start.anchor : e.data.sequence_start.anchor)
          more = fail(ev.loc, kNoAliases);
        break;
      case YAML_MAPPING_END_EVENT:
        ev.type = Ev::MapEnd;
        break;
      case YAML_SEQUENCE_END_EVENT:
        ev.type = Ev::SeqEnd;
        break;
      case YAML_SCALAR_EVENT:
        ev.type = Ev::Scalar;
        if (e.data.scalar.anchor)
          more = fail(ev.loc, kNoAliases);
        else if (e.data.scalar.length > kMaxScalar)
          more = fail(ev.loc, "scalar longer than " + std::to_string(kMaxScalar) + " bytes");
        else {
          ev.scalar.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
          ev.plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        }
        break;
      case YAML_ALIAS_EVENT:
        more = fail(ev.loc, kNoAliases);
        break;
    }
    yaml_event_delete(&e);
    if (keep) return more;
  }
}

void YamlReader::fill(Batch& b) {
  b.n = 0;
  bool more = true;
  while (more && b.n < kBatch) {
    if (b.n == b.ev.size()) b.ev.emplace_back();
    more = parse_one(b.ev[b.n++]);
  }
  parsed_all_ = !more;
}

void YamlReader::produce(Batch* b, Handover& h) {
  b->n = 0;
  if (fast_) {
    switch (fast_->fill(b->ev, b->n, kBatch)) {
      case FastScan::Step::More:
        if (held_) {
          h.publish[0] = held_;
          published_ += held_->n;
        }
        held_ = b;
        return;
      case FastScan::Step::End:
        parsed_all_ = true;
        h.publish[0] = held_ ? held_ : b;
        h.publish[1] = held_ ? b : nullptr;
        held_ = nullptr;
        fast_.reset();
        return;
      case FastScan::Step::Bail:
        fast_.reset();
        h.freed = held_;
        held_ = nullptr;
        skip_ = published_;
        start_libyaml();
        break;
    }
  }
  // libyaml again makes the events the reader already has: dropped.
  for (; skip_ > 0; --skip_) {
    if (b->ev.empty()) b->ev.emplace_back();
    if (!parse_one(b->ev[0])) {  // cannot happen if the two agree; then say what libyaml says
      b->n = 1;
      skip_ = 0;
      parsed_all_ = true;
      h.publish[0] = b;
      return;
    }
  }
  fill(*b);
  h.publish[0] = b;
}

void YamlReader::parse_loop() {
  for (;;) {
    Batch* b;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !empty_.empty(); });
      if (stop_) return;
      b = empty_.back();
      empty_.pop_back();
    }
    Handover h;
    produce(b, h);
    {
      std::lock_guard lk(mu_);
      for (Batch* p : h.publish)
        if (p) full_.push_back(p);
      if (h.freed) empty_.push_back(h.freed);
    }
    cv_.notify_all();
    if (parsed_all_) return;
  }
}

// Reader side: the next batch of events, from the thread or parsed here.
bool YamlReader::refill() {
  if (ended_) return false;
  Batch* done = prev_batch_;
  prev_batch_ = cur_batch_;
  if (!thread_.joinable()) {
    if (done) empty_.push_back(done);
    while (full_.empty()) {
      Batch* b = empty_.back();
      empty_.pop_back();
      Handover h;
      produce(b, h);
      for (Batch* p : h.publish)
        if (p) full_.push_back(p);
      if (h.freed) empty_.push_back(h.freed);
    }
    cur_batch_ = full_.front();
    full_.pop_front();
  } else {
    std::unique_lock lk(mu_);
    if (done) empty_.push_back(done);
    cv_.notify_all();
    cv_.wait(lk, [&] { return !full_.empty(); });
    cur_batch_ = full_.front();
    full_.pop_front();
  }
  pos_ = 0;
  return true;
}

const YamlReader::Event* YamlReader::take() {
  if (failed_ || !open_ || ((!cur_batch_ || pos_ == cur_batch_->n) && !refill())) {
    end_.scalar.clear();
    end_.type = failed_ || !open_ ? Ev::Error : Ev::StreamEnd;
    return &end_;
  }
  const Event* e = &cur_batch_->ev[pos_++];
  if (e->type == Ev::StreamEnd) ended_ = true;
  if (e->type == Ev::Error) {
    ended_ = failed_ = true;
    diags_.error(e->loc, e->scalar);
  }
  return e;
}

const YamlReader::Event& YamlReader::next() {
  if (has_peeked_) {
    cur_ = peeked_;
    has_peeked_ = false;
  } else {
    cur_ = take();
  }
  return *cur_;
}

const YamlReader::Event& YamlReader::peek() {
  if (!has_peeked_) {
    peeked_ = take();
    has_peeked_ = true;
  }
  return *peeked_;
}

bool YamlReader::read_map_rest(Node& out, SourceLoc loc) {
  out.loc = loc;
  return read_map_entries(out, 1);
}

namespace {
// A mapping's keys by their slot in Node::map (slots stay put while the
// vector grows; the strings in them may move).
struct KeyHash {
  const std::vector<NodeEntry>* map;
  size_t operator()(size_t i) const { return std::hash<std::string>{}((*map)[i].first.scalar); }
};
struct KeySame {
  const std::vector<NodeEntry>* map;
  bool operator()(size_t a, size_t b) const { return (*map)[a].first.scalar == (*map)[b].first.scalar; }
};
// A rule's handful of keys are checked by a scan; from this many on, an
// index keeps a hostile mapping of millions of keys linear.
constexpr size_t kScanKeys = 32;
}  // namespace

bool YamlReader::read_map_entries(Node& out, int depth) {
  std::optional<std::unordered_set<size_t, KeyHash, KeySame>> index;
  out.type = Node::Type::Map;
  out.scalar.clear();
  out.seq.clear();
  size_t n = 0;  // entries read; out.map's tail is spare capacity
  auto done = [&](bool ok) {
    out.map.resize(n);
    return ok;
  };
  for (;;) {
    const Event& k = peek();
    if (k.type == Ev::MapEnd) {
      next();
      return done(true);
    }
    if (k.type == Ev::Error) return done(false);
    if (n == kMaxKeys) {
      diags_.error(k.loc, "a mapping of more than " + std::to_string(kMaxKeys) + " keys");
      failed_ = true;
      return done(false);
    }
    if (n == out.map.size()) out.map.emplace_back();
    NodeEntry& kv = out.map[n];
    if (!read_node(kv.first, depth + 1)) return done(false);
    if (!kv.first.is_scalar()) {
      diags_.error(kv.first.loc, "mapping keys must be plain words");
      skip_node();
      continue;
    }
    bool dup = false;
    if (n < kScanKeys) {
      for (size_t i = 0; i < n && !dup; ++i) dup = out.map[i].first.scalar == kv.first.scalar;
    } else {
      if (!index) {
        index.emplace(2 * n, KeyHash{&out.map}, KeySame{&out.map});
        for (size_t i = 0; i < n; ++i) index->insert(i);
      }
      dup = !index->insert(n).second;  // a duplicate leaves slot n out of the index
    }
    if (dup) {
      diags_.error(kv.first.loc, "duplicate key '" + kv.first.scalar + "'");
      if (diags_.too_many()) {  // nothing more would be said: stop reading
        failed_ = true;
        return done(false);
      }
      skip_node();
      continue;
    }
    if (!read_node(kv.second, depth + 1)) return done(false);
    ++n;
  }
}

bool YamlReader::read_node(Node& out) {
  return read_node(out, 0);
}

bool YamlReader::read_node(Node& out, int depth) {
  // `out` may hold the previous entry of a list (Loader::list reuses one
  // Node): its strings and vectors are overwritten in place, so rules of one
  // shape are read without allocating.
  const Event& ev = next();
  out.loc = ev.loc;
  if (depth > kMaxDepth) {
    diags_.error(ev.loc, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    failed_ = true;
    return false;
  }
  switch (ev.type) {
    case Ev::Scalar:
      out.type = Node::Type::Scalar;
      out.scalar.assign(ev.scalar);
      out.plain = ev.plain;
      out.map.clear();
      out.seq.clear();
      return true;
    case Ev::MapStart:
      return read_map_entries(out, depth);
    case Ev::SeqStart: {
      out.type = Node::Type::Seq;
      out.scalar.clear();
      out.map.clear();
      size_t n = 0;
      for (;;) {
        const Event& k = peek();
        if (k.type == Ev::SeqEnd) {
          next();
          out.seq.resize(n);
          return true;
        }
        if (k.type == Ev::Error) {
          out.seq.resize(n);
          return false;
        }
        if (n == out.seq.size()) out.seq.emplace_back();
        if (!read_node(out.seq[n++], depth + 1)) {
          out.seq.resize(n);
          return false;
        }
      }
    }
    default:
      return false;
  }
}

void YamlReader::skip_node() {
  int depth = 0;
  do {
    const Event& ev = next();
    if (ev.type == Ev::MapStart || ev.type == Ev::SeqStart)
      ++depth;
    else if (ev.type == Ev::MapEnd || ev.type == Ev::SeqEnd)
      --depth;
    else if (ev.type == Ev::Error || ev.type == Ev::StreamEnd)
      return;
  } while (depth > 0);
}

std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out.append(s);
  out += '\'';
  return out;
}

std::string text_of(const Node& n) {
  return n.is_scalar() ? quoted(n.scalar) : std::string("a ") + n.type_name();
}

}  // namespace tcsync
