// Netlink wire format, over buffers the caller owns (as libmnl does): many
// messages are built back to back in one buffer and sent with one sendmsg.
//
//   nlmsghdr (16) | tcmsg (20) | rtattr (4) payload pad4 | rtattr ...
//
// Pure: no sockets here, so the encoder and decoder are tested byte for byte.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcsync {

constexpr size_t nl_align(size_t n) {
  return (n + 3) & ~size_t{3};
}

// Appends messages and attributes to a growing byte buffer. Offsets, not
// pointers, mark open headers so the buffer may grow while a message is open.
class MsgWriter {
 public:
  explicit MsgWriter(std::vector<uint8_t>& buf) : buf_(buf) {}

  size_t begin_message(uint16_t type, uint16_t flags, uint32_t seq);
  void end_message(size_t msg_off);
  template <typename T>
  void put_struct(const T& s) {
    put_raw(&s, sizeof s);
  }
  void put_raw(const void* data, size_t len);  // padded to 4
  // Unpadded: for a bare struct whose attribute length counts only its own
  // bytes (hfsc's 2-byte tc_hfsc_qopt); whoever closes the attribute pads.
  void put_unpadded(const void* data, size_t len);

  void attr(uint16_t type, const void* data, size_t len);
  void attr_u8(uint16_t type, uint8_t v) { attr(type, &v, 1); }
  void attr_u16(uint16_t type, uint16_t v) { attr(type, &v, 2); }
  void attr_u32(uint16_t type, uint32_t v) { attr(type, &v, 4); }
  void attr_u64(uint16_t type, uint64_t v) { attr(type, &v, 8); }
  void attr_be16(uint16_t type, uint16_t v) { attr_u16(type, __builtin_bswap16(v)); }
  void attr_be32(uint16_t type, uint32_t v) { attr_u32(type, __builtin_bswap32(v)); }
  void attr_str(uint16_t type, std::string_view s);  // NUL-terminated
  void attr_flag(uint16_t type) { attr(type, nullptr, 0); }
  // A nested attribute. NLA_F_NESTED is the caller's to add (type |
  // NLA_F_NESTED): tc sets it only where the kernel parses strictly
  // (TCA_ACT_OPTIONS), and tcsync sends the bytes tc sends.
  size_t nest_begin(uint16_t type);
  void nest_end(size_t off);
  // Offset of the next byte from the start of the message begun at msg_off:
  // the kernel's extended ACK reports a bad attribute by this offset.
  size_t offset_in(size_t msg_off) const { return buf_.size() - msg_off; }
  size_t size() const { return buf_.size(); }
  std::vector<uint8_t>& buffer() { return buf_; }

 private:
  std::vector<uint8_t>& buf_;
};

// One attribute seen in a buffer.
struct Attr {
  uint16_t type = 0;  // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  std::span<const uint8_t> data;
  uint8_t u8() const { return data.size() >= 1 ? data[0] : 0; }
  uint16_t u16() const { return read<uint16_t>(); }
  uint32_t u32() const { return read<uint32_t>(); }
  uint64_t u64() const { return read<uint64_t>(); }
  uint16_t be16() const { return __builtin_bswap16(u16()); }
  uint32_t be32() const { return __builtin_bswap32(u32()); }
  std::string str() const;  // up to the first NUL
  // A struct payload; missing tail bytes read as zero (older kernels send
  // shorter structs, newer ones longer: both are fine).
  template <typename T>
  T as() const {
    T v{};
    std::memcpy(&v, data.data(), data.size() < sizeof v ? data.size() : sizeof v);
    return v;
  }

 private:
  template <typename T>
  T read() const {
    T v{};
    if (data.size() >= sizeof v) std::memcpy(&v, data.data(), sizeof v);
    return v;
  }
};

// Iterates the attributes of a buffer; a truncated tail ends the walk.
class AttrIter {
 public:
  explicit AttrIter(std::span<const uint8_t> buf) : buf_(buf) {}
  bool next(Attr& a);

 private:
  std::span<const uint8_t> buf_;
  size_t pos_ = 0;
};

// Which attribute types of one buffer were asked for by AttrTable::get on a
// table over exactly that buffer, while the log is open on this thread.
//
// Why: each kind decodes its TCA_OPTIONS by hand, and whatever the kernel
// reports that a decoder never asks for would otherwise vanish from the
// model. The codec opens a log around a kind's decoder and keeps every
// attribute nobody asked for as raw bytes (never silent: what tcsync cannot
// read is carried back exactly, and compared byte for byte).
class AttrReadLog {
 public:
  explicit AttrReadLog(std::span<const uint8_t> buf);
  ~AttrReadLog();
  AttrReadLog(const AttrReadLog&) = delete;
  AttrReadLog& operator=(const AttrReadLog&) = delete;
  void mark(uint16_t type) {
    if (type < kTypes) asked_[type / 64] |= uint64_t{1} << (type % 64);
  }
  bool asked(uint16_t type) const { return type < kTypes && (asked_[type / 64] >> (type % 64) & 1); }
  // The log open on this thread for exactly `buf`, or null.
  static AttrReadLog* for_buffer(std::span<const uint8_t> buf);

 private:
  static constexpr uint16_t kTypes = 256;  // above every TCA_*_MAX today
  std::span<const uint8_t> buf_;
  uint64_t asked_[kTypes / 64] = {};
  AttrReadLog* outer_;
};

// Indexes attributes by type (last one wins, as nla_parse): tb[type].
// A dump decodes several tables a rule (100k rules: a million tables), so
// small ones live inside the object, never on the heap.
class AttrTable {
 public:
  static constexpr uint16_t kTypes = 256;  // above every TCA_*_MAX today, as AttrReadLog
  AttrTable(std::span<const uint8_t> buf, uint16_t max_type);
  AttrTable(const AttrTable&) = delete;
  AttrTable& operator=(const AttrTable&) = delete;
  // The attribute, marked as read in the open log (AttrReadLog).
  const Attr* get(uint16_t type) const {
    if (log_) log_->mark(type);
    return peek(type);
  }
  // The attribute, not marked: for a look that must not decide what stays
  // unread (a reader that may yet leave it whole as raw bytes).
  const Attr* peek(uint16_t type) const {
    return type <= max_ && (present_[type / 64] >> (type % 64) & 1) ? &slots()[type].attr : nullptr;
  }

 private:
  static constexpr uint16_t kInline = 32;
  // A slot is read only once written (present_ says which), so none is
  // initialized: zeroing 32 Attrs for each of a rule's seven or so tables
  // was a tenth of the user time of a 100k u32 dump.
  union Slot {
    Slot() {}
    Attr attr;
  };
  const Slot* slots() const { return heap_ ? heap_.get() : inline_; }
  Slot inline_[kInline];
  std::unique_ptr<Slot[]> heap_;  // max_type >= kInline
  uint64_t present_[kTypes / 64] = {};
  uint16_t max_;
  AttrReadLog* log_;
};

// The attributes of `buf` whose types `keep` says yes to, copied as they
// are (headers, flags and padding included): bytes a message can carry again.
template <typename Keep>
std::vector<uint8_t> select_attrs(std::span<const uint8_t> buf, Keep&& keep);

// Whether `buf` is a run of whole attributes, each length adding up to the end.
bool whole_attrs(std::span<const uint8_t> buf);

// The types of the attributes, outermost first, that lead to the one starting
// at byte `off` of `buf` (a run of attributes): how a kernel refusal that names
// an offset (NLMSGERR_ATTR_OFFS) is turned back into a field. An attribute is
// entered when `off` lies inside its payload and the payload is whole
// attributes (a nest; tc leaves NLA_F_NESTED off most). Empty: no attribute
// starts at `off`.
std::vector<uint16_t> attr_path(std::span<const uint8_t> buf, size_t off);

// The attribute types in a run of attributes, for messages: "8, 12".
std::string attr_types(std::span<const uint8_t> buf);

// Human-readable hex dump used by golden tests: one attribute per line,
// nested attributes indented.
std::string hexdump(std::span<const uint8_t> data);

template <typename Keep>
std::vector<uint8_t> select_attrs(std::span<const uint8_t> buf, Keep&& keep) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  while (pos + 4 <= buf.size()) {
    uint16_t len, type;
    std::memcpy(&len, buf.data() + pos, 2);
    std::memcpy(&type, buf.data() + pos + 2, 2);
    if (len < 4 || pos + len > buf.size()) break;
    size_t whole = std::min(nl_align(len), buf.size() - pos);
    if (keep(static_cast<uint16_t>(type & 0x3FFF))) out.insert(out.end(), buf.begin() + pos, buf.begin() + pos + whole);
    pos += nl_align(len);
  }
  // A last attribute without its padding (the message ended there) is padded
  // here, so the bytes can be followed by more attributes.
  out.resize(nl_align(out.size()), 0);
  return out;
}

}  // namespace tcsync
