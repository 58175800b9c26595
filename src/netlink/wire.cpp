#include "netlink/wire.h"

#include <linux/netlink.h>

#include <cstdio>

namespace tcsync {

size_t MsgWriter::begin_message(uint16_t type, uint16_t flags, uint32_t seq) {
  size_t off = buf_.size();
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  put_struct(h);
  return off;
}

void MsgWriter::end_message(size_t msg_off) {
  auto len = static_cast<uint32_t>(buf_.size() - msg_off);
  std::memcpy(buf_.data() + msg_off, &len, sizeof len);  // nlmsg_len is first
}

void MsgWriter::put_raw(const void* data, size_t len) {
  size_t off = buf_.size();
  buf_.resize(off + nl_align(len));
  if (len) std::memcpy(buf_.data() + off, data, len);
  std::memset(buf_.data() + off + len, 0, nl_align(len) - len);
}

void MsgWriter::put_unpadded(const void* data, size_t len) {
  size_t off = buf_.size();
  buf_.resize(off + len);
  if (len) std::memcpy(buf_.data() + off, data, len);
}

void MsgWriter::attr(uint16_t type, const void* data, size_t len) {
  uint16_t hdr[2] = {static_cast<uint16_t>(4 + len), type};
  put_raw(hdr, 4);
  put_raw(data, len);
}

void MsgWriter::attr_str(uint16_t type, std::string_view s) {
  size_t off = buf_.size();
  uint16_t hdr[2] = {static_cast<uint16_t>(4 + s.size() + 1), type};
  buf_.resize(off + 4 + nl_align(s.size() + 1));
  std::memcpy(buf_.data() + off, hdr, 4);
  std::memcpy(buf_.data() + off + 4, s.data(), s.size());
  std::memset(buf_.data() + off + 4 + s.size(), 0, nl_align(s.size() + 1) - s.size());
}

size_t MsgWriter::nest_begin(uint16_t type) {
  size_t off = buf_.size();
  uint16_t hdr[2] = {0, type};
  put_raw(hdr, 4);
  return off;
}

void MsgWriter::nest_end(size_t off) {
  auto len = static_cast<uint16_t>(buf_.size() - off);
  std::memcpy(buf_.data() + off, &len, sizeof len);
}

std::string Attr::str() const {
  size_t n = 0;
  while (n < data.size() && data[n]) ++n;
  return std::string(reinterpret_cast<const char*>(data.data()), n);
}

bool AttrIter::next(Attr& a) {
  if (pos_ + 4 > buf_.size()) return false;
  uint16_t hdr[2];
  std::memcpy(hdr, buf_.data() + pos_, 4);
  if (hdr[0] < 4 || pos_ + hdr[0] > buf_.size()) return false;
  a.type = hdr[1] & NLA_TYPE_MASK;
  a.data = buf_.subspan(pos_ + 4, hdr[0] - 4);
  pos_ += nl_align(hdr[0]);
  return true;
}

namespace {
thread_local AttrReadLog* open_log = nullptr;
}

AttrReadLog::AttrReadLog(std::span<const uint8_t> buf) : buf_(buf), outer_(open_log) {
  open_log = this;
}
AttrReadLog::~AttrReadLog() {
  open_log = outer_;
}

AttrReadLog* AttrReadLog::for_buffer(std::span<const uint8_t> buf) {
  for (AttrReadLog* l = open_log; l; l = l->outer_)
    if (l->buf_.data() == buf.data() && l->buf_.size() == buf.size()) return l;
  return nullptr;
}

bool whole_attrs(std::span<const uint8_t> buf) {
  size_t pos = 0;
  while (pos + 4 <= buf.size()) {
    uint16_t len;
    std::memcpy(&len, buf.data() + pos, 2);
    if (len < 4 || pos + len > buf.size()) return false;
    pos += nl_align(len);
  }
  return pos == buf.size();
}

std::vector<uint16_t> attr_path(std::span<const uint8_t> buf, size_t off) {
  std::vector<uint16_t> path;
  size_t base = 0;  // where `buf` starts, counted from the outermost run
  for (;;) {
    AttrIter it(buf);
    Attr a;
    bool entered = false;
    while (it.next(a)) {
      size_t start = base + static_cast<size_t>(a.data.data() - buf.data()) - 4;
      if (start == off) {
        path.push_back(a.type);
        return path;
      }
      size_t payload = start + 4;
      if (off >= payload && off < payload + a.data.size() && whole_attrs(a.data)) {
        path.push_back(a.type);
        base = payload;
        buf = a.data;
        entered = true;
        break;
      }
    }
    if (!entered) return {};
  }
}

std::string attr_types(std::span<const uint8_t> buf) {
  std::string out;
  AttrIter it(buf);
  Attr a;
  while (it.next(a)) out += (out.empty() ? "" : ", ") + std::to_string(a.type);
  return out;
}

AttrTable::AttrTable(std::span<const uint8_t> buf, uint16_t max_type)
    : max_(std::min<uint16_t>(max_type, kTypes - 1)), log_(AttrReadLog::for_buffer(buf)) {
  if (max_ >= kInline) heap_ = std::make_unique<Slot[]>(max_ + 1u);
  Slot* slots = heap_ ? heap_.get() : inline_;
  AttrIter it(buf);
  Attr a;
  while (it.next(a))
    if (a.type <= max_)
      slots[a.type].attr = a, present_[a.type / 64] |= uint64_t{1} << (a.type % 64);  // unknown: skipped
}

std::string hexdump(std::span<const uint8_t> data) {
  std::string out;
  char b[4];
  for (size_t i = 0; i < data.size(); ++i) {
    std::snprintf(b, sizeof b, "%02x", data[i]);
    out += b;
    out += (i % 16 == 15 || i + 1 == data.size()) ? '\n' : ' ';
  }
  return out;
}

}  // namespace tcsync
