// Ematch trees: tc's expression grammar (tc/emp_ematch.y) parsed into
// sequences of terms, printed canonically, and laid out as the kernel's flat
// list (include/net/pkt_cls.h, net/sched/ematch.c).
//
//   EXPR  := TERM { (and | or) TERM }      no precedence: the kernel reads
//   TERM  := [not] ( MATCH | '(' EXPR ')' )  a sequence left to right and
//   MATCH := KIND '(' ARG... ')'              stops early (and: false, or: true)
//
// A parenthesised expression is a container match (kind 0) whose data is
// the index of its first child; tc numbers a sequence first, then each
// container's sequence depth first, and so does encode_tree.
#include "kinds/filter/ematch.h"
#include "base/hex.h"

#include <linux/pkt_cls.h>
#include <linux/tc_ematch/tc_em_cmp.h>
#include <linux/tc_ematch/tc_em_meta.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync::ematch {
namespace {

using Bytes = std::vector<uint8_t>;

// ---- tokens ------------------------------------------------------------------

struct Tok {
  enum Type : uint8_t { Word, Str, LParen, RParen, End } type = End;
  std::string text;  // a word, or a quoted string's bytes after escapes
  size_t off = 0;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Quoted strings take tc's escapes: \xHH, \OOO (octal), \n \r \t \v \b \f \a,
// and a backslash before any other character stands for that character.
bool tokenize(std::string_view s, std::vector<Tok>& out, ParseError& err) {
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Tok::LParen : Tok::RParen, std::string(1, c), i});
      ++i;
      continue;
    }
    if (c == '"') {
      Tok t{Tok::Str, "", i};
      ++i;
      for (;;) {
        if (i >= s.size()) {
          err = {t.off, "unterminated string"};
          return false;
        }
        char d = s[i];
        if (d == '"') {
          ++i;
          break;
        }
        if (d != '\\') {
          t.text += d;
          ++i;
          continue;
        }
        if (++i >= s.size()) continue;  // reported as unterminated
        char e = s[i];
        if (e == 'x' && i + 1 < s.size() && hex_digit(s[i + 1]) >= 0) {
          int v = hex_digit(s[++i]);
          if (i + 1 < s.size() && hex_digit(s[i + 1]) >= 0) v = v * 16 + hex_digit(s[++i]);
          t.text += static_cast<char>(v);
          ++i;
        } else if (e >= '0' && e <= '7') {
          int v = 0, n = 0;
          while (n < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7') v = v * 8 + (s[i++] - '0'), ++n;
          if (v > 0xFF) {
            err = {i - n - 1, "octal escape out of range"};
            return false;
          }
          t.text += static_cast<char>(v);
        } else {
          const char* from = "nrtvbfa";
          const char* to = "\n\r\t\v\b\f\a";
          const char* p = std::strchr(from, e);
          t.text += p ? to[p - from] : e;
          ++i;
        }
      }
      out.push_back(std::move(t));
      continue;
    }
    size_t start = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != '(' && s[i] != ')' && s[i] != '"') ++i;
    out.push_back({Tok::Word, std::string(s.substr(start, i - start)), start});
  }
  out.push_back({Tok::End, "", s.size()});
  return true;
}

bool word_is(const Tok& t, std::string_view w) {
  if (t.type != Tok::Word || t.text.size() != w.size()) return false;
  for (size_t i = 0; i < w.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(t.text[i])) != w[i]) return false;
  return true;
}

// A number as strtoul(…, 0) reads it (0x hex, leading 0 octal), but the
// whole word must be the number.
std::optional<uint64_t> parse_num(std::string_view s, uint64_t max) {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    base = 16, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0')
    base = 8, s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = hex_digit(c);
    if (d < 0 || static_cast<unsigned>(d) >= base) return std::nullopt;
    if (v > (max - static_cast<uint64_t>(d)) / base) return std::nullopt;
    v = v * base + static_cast<uint64_t>(d);
  }
  return v;
}

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v)), b.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(Bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v)), put16(b, static_cast<uint16_t>(v >> 16));
}
uint32_t get32(std::span<const uint8_t> d, size_t at) {
  uint32_t v;
  std::memcpy(&v, d.data() + at, 4);
  return v;
}
uint16_t get16(std::span<const uint8_t> d, size_t at) {
  uint16_t v;
  std::memcpy(&v, d.data() + at, 2);
  return v;
}

// ---- the tree ------------------------------------------------------------------

struct Term {
  bool invert = false;
  uint8_t rel = TCF_EM_REL_END;  // relation to the next term of the sequence
  uint16_t kind = TCF_EM_CONTAINER;
  Bytes data;               // a match's bytes after tcf_ematch_hdr
  std::vector<Term> child;  // a container's sequence
};
using Seq = std::vector<Term>;

// A match's arguments, as tc hands them to the kind's parser.
using Args = std::span<const Tok>;

struct LeafError {
  const Tok* at;
  std::string message;
};

// A layer word as cmp and nbyte take it: link, network or transport (tc
// looks at the first letter only), or the number 0..2.
std::optional<uint64_t> parse_layer(const Tok& l) {
  if (l.type != Tok::Word) return std::nullopt;
  char c = l.text.empty() ? 0 : l.text[0];
  if (c == 'l' || c == 'n' || c == 't')
    return c == 'l' ? TCF_LAYER_LINK : c == 'n' ? TCF_LAYER_NETWORK : TCF_LAYER_TRANSPORT;
  return parse_num(l.text, TCF_LAYER_MAX);
}

// ---- cmp: struct tcf_em_cmp, 12 bytes --------------------------------------
// val u32, mask u32, off u16, then align:4 flags:4 and layer:4 opnd:4 (the
// first bit-field in the low nibble).

const char* const kOps[] = {"eq", "gt", "lt"};  // TCF_EM_OPND_EQ, GT, LT
const char* const kLayers[] = {"link", "network", "transport"};

std::optional<int> parse_op(const Tok& t) {
  for (int i = 0; i < 3; ++i)
    if (t.type == Tok::Word && t.text == kOps[i]) return i;
  return std::nullopt;
}

std::optional<LeafError> parse_cmp(Args a, Bytes& out, const Tok& name) {
  if (a.empty() || a[0].type != Tok::Word || (a[0].text != "u8" && a[0].text != "u16" && a[0].text != "u32"))
    return LeafError{a.empty() ? &name : &a[0], "cmp: expected u8, u16 or u32 first"};
  uint8_t align = a[0].text == "u8" ? TCF_EM_ALIGN_U8 : a[0].text == "u16" ? TCF_EM_ALIGN_U16 : TCF_EM_ALIGN_U32;
  uint64_t off = 0, layer = TCF_LAYER_NETWORK, mask = 0, val = 0;
  int op = TCF_EM_OPND_EQ;
  bool have_off = false, have_val = false, trans = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const Tok& w = a[i];
    auto value = [&](uint64_t max, const char* what) -> std::optional<LeafError> {
      if (i + 1 >= a.size()) return LeafError{&w, "cmp: " + w.text + " needs a value"};
      auto v = parse_num(a[i + 1].text, max);
      if (!v || a[i + 1].type != Tok::Word)
        return LeafError{&a[i + 1], std::string("cmp: ") + what + " must be a number up to " + std::to_string(max)};
      ++i;
      return std::nullopt;
    };
    if (w.type == Tok::Word && w.text == "at") {
      if (auto e = value(0xFFFF, "the offset")) return e;
      off = *parse_num(a[i].text, 0xFFFF), have_off = true;
    } else if (w.type == Tok::Word && w.text == "layer") {
      if (i + 1 >= a.size()) return LeafError{&w, "cmp: layer needs a value"};
      const Tok& l = a[++i];
      if (auto v = parse_layer(l))
        layer = *v;
      else
        return LeafError{&l, "cmp: layer must be link, network, transport or 0..2"};
    } else if (w.type == Tok::Word && w.text == "mask") {
      if (auto e = value(0xFFFFFFFF, "the mask")) return e;
      mask = *parse_num(a[i].text, 0xFFFFFFFF);
    } else if (w.type == Tok::Word && w.text == "trans") {
      trans = true;
    } else if (auto o = parse_op(w)) {
      if (auto e = value(0xFFFFFFFF, "the value")) return e;
      op = *o, val = *parse_num(a[i].text, 0xFFFFFFFF), have_val = true;
    } else {
      return LeafError{&w, "cmp: unknown word '" + w.text + "' (expected at, layer, mask, trans, eq, gt or lt)"};
    }
  }
  if (!have_off) return LeafError{&name, "cmp: needs an offset (at N)"};
  if (!have_val) return LeafError{&name, "cmp: needs a comparison (eq|gt|lt VALUE)"};
  put32(out, static_cast<uint32_t>(val));
  put32(out, static_cast<uint32_t>(mask));
  put16(out, static_cast<uint16_t>(off));
  out.push_back(static_cast<uint8_t>(align | (trans ? TCF_EM_CMP_TRANS << 4 : 0)));
  out.push_back(static_cast<uint8_t>(layer | (op << 4)));
  return std::nullopt;
}

std::optional<std::string> print_cmp(std::span<const uint8_t> d) {
  if (d.size() != 12) return std::nullopt;
  uint32_t val = get32(d, 0), mask = get32(d, 4);
  uint16_t off = get16(d, 8);
  unsigned align = d[10] & 0xF, flags = d[10] >> 4, layer = d[11] & 0xF, op = d[11] >> 4;
  if ((align != 1 && align != 2 && align != 4) || (flags & ~TCF_EM_CMP_TRANS) || layer > TCF_LAYER_MAX || op > 2)
    return std::nullopt;
  std::string s =
      std::string("cmp(u") + std::to_string(align * 8) + " at " + std::to_string(off) + " layer " + kLayers[layer];
  if (mask) s += " mask " + hex_0x(mask);
  if (flags) s += " trans";
  return s + " " + kOps[op] + " " + std::to_string(val) + ")";
}

// ---- nbyte: struct tcf_em_nbyte, 4 bytes, then the needle --------------------
// off u16, then len:12 and layer:4 in one u16 (layer in the high nibble).
// tc (em_nbyte.c): nbyte(NEEDLE at OFFSET [layer LAYER]), the needle a
// word or a quoted string with tc's escapes, the layer network by default.

std::optional<LeafError> parse_nbyte(Args a, Bytes& out, const Tok& name) {
  if (a.empty()) return LeafError{&name, "nbyte: needs a needle and an offset: nbyte(\"abc\" at 0)"};
  const Tok& needle = a[0];
  if (needle.text.empty()) return LeafError{&needle, "nbyte: the needle is empty"};
  if (needle.text.size() > 0xFFF) return LeafError{&needle, "nbyte: the needle is longer than 4095 bytes"};
  uint64_t off = 0, layer = TCF_LAYER_NETWORK;
  bool have_off = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const Tok& w = a[i];
    if (w.type == Tok::Word && (w.text == "at" || w.text == "layer") && i + 1 >= a.size())
      return LeafError{&w, "nbyte: " + w.text + " needs a value"};
    if (w.type == Tok::Word && w.text == "at") {
      auto v = parse_num(a[i + 1].text, 0xFFFF);
      if (!v || a[i + 1].type != Tok::Word)
        return LeafError{&a[i + 1], "nbyte: the offset must be a number up to 65535"};
      off = *v, have_off = true, ++i;
    } else if (w.type == Tok::Word && w.text == "layer") {
      const Tok& l = a[++i];
      if (auto v = parse_layer(l))
        layer = *v;
      else
        return LeafError{&l, "nbyte: layer must be link, network, transport or 0..2"};
    } else {
      return LeafError{&w, "nbyte: unknown word '" + w.text + "' (expected at or layer)"};
    }
  }
  if (!have_off) return LeafError{&name, "nbyte: needs an offset (at N)"};
  put16(out, static_cast<uint16_t>(off));
  put16(out, static_cast<uint16_t>(needle.text.size() | (layer << 12)));
  out.insert(out.end(), needle.text.begin(), needle.text.end());
  out.resize(nl_align(out.size()), 0);  // tc's addraw_l pads the needle, and the kernel reports it so
  return std::nullopt;
}

std::optional<std::string> print_nbyte(std::span<const uint8_t> d) {
  if (d.size() < 4) return std::nullopt;
  uint16_t off = get16(d, 0), lenlayer = get16(d, 2);
  size_t len = lenlayer & 0xFFF;
  unsigned layer = lenlayer >> 12;
  // Sent and reported padded to 4 bytes.
  if (len == 0 || d.size() != nl_align(4 + len) || layer > TCF_LAYER_MAX) return std::nullopt;
  std::string s = "nbyte(\"";
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 4; i < 4 + len; ++i) {
    uint8_t ch = d[i];
    if (ch >= 0x20 && ch < 0x7F && ch != '"' && ch != '\\')  // quote and backslash as \xHH, as meta's strings
      s += static_cast<char>(ch);
    else
      s += "\\x", s += kHex[ch >> 4], s += kHex[ch & 0xF];
  }
  return s + "\" at " + std::to_string(off) + " layer " + kLayers[layer] + ")";
}

// ---- u32: struct tc_u32_key, 16 bytes ---------------------------------------
// mask and val in network order, off and offmask host ints. tc shifts u8 and
// u16 keys into their place in the 32-bit word at off & ~3.

std::optional<LeafError> parse_u32(Args a, Bytes& out, const Tok& name) {
  if (a.empty() || a[0].type != Tok::Word || (a[0].text != "u8" && a[0].text != "u16" && a[0].text != "u32"))
    return LeafError{a.empty() ? &name : &a[0], "u32: expected u8, u16 or u32 first"};
  int width = a[0].text == "u8" ? 1 : a[0].text == "u16" ? 2 : 4;
  uint64_t max = width == 1 ? 0xFF : width == 2 ? 0xFFFF : 0xFFFFFFFF;
  if (a.size() < 5 || a[3].type != Tok::Word || a[3].text != "at")
    return LeafError{a.size() > 3 ? &a[3] : &name, "u32: expected u32(" + a[0].text + " VALUE MASK at OFFSET)"};
  if (a.size() > 5) return LeafError{&a[5], "u32: unexpected '" + a[5].text + "' after the offset"};
  auto key = parse_num(a[1].text, max);
  if (!key || a[1].type != Tok::Word) return LeafError{&a[1], "u32: the value must be a number up to " + hex_0x(max)};
  auto mask = parse_num(a[2].text, max);
  if (!mask || a[2].type != Tok::Word) return LeafError{&a[2], "u32: the mask must be a number up to " + hex_0x(max)};
  std::string_view o = a[4].text;
  bool nexthdr = o.starts_with("nexthdr+");
  if (nexthdr) o.remove_prefix(8);
  auto off = parse_num(o, 0x7FFFFFFF);
  if (!off || a[4].type != Tok::Word) return LeafError{&a[4], "u32: the offset must be a number or nexthdr+N"};
  uint64_t k = *key, m = *mask, at = *off;
  if (width == 1) {
    k <<= 24 - (at & 3) * 8, m <<= 24 - (at & 3) * 8;
    at &= ~uint64_t{3};
  } else if (width == 2) {
    if ((at & 3) == 0) k <<= 16, m <<= 16;
    at &= ~uint64_t{3};
  }
  if (at % 4) return LeafError{&a[4], "u32: a u32 offset must be a multiple of 4"};
  k &= m;
  put32(out, __builtin_bswap32(static_cast<uint32_t>(m)));
  put32(out, __builtin_bswap32(static_cast<uint32_t>(k)));
  put32(out, static_cast<uint32_t>(at));
  put32(out, nexthdr ? 0xFFFFFFFF : 0);
  return std::nullopt;
}

std::optional<std::string> print_u32(std::span<const uint8_t> d) {
  if (d.size() != 16) return std::nullopt;
  uint32_t m = __builtin_bswap32(get32(d, 0)), v = __builtin_bswap32(get32(d, 4));
  uint32_t off = get32(d, 8), offmask = get32(d, 12);
  if ((v & ~m) || off % 4 || off > 0x7FFFFFFF || (offmask != 0 && offmask != 0xFFFFFFFF)) return std::nullopt;
  // The narrowest form whose bits hold the whole mask.
  std::string w = "u32";
  uint32_t add = 0;
  for (uint32_t b = 0; b < 4 && m && w == "u32"; ++b)
    if ((m & ~(0xFFu << (24 - 8 * b))) == 0) w = "u8", add = b, v >>= 24 - 8 * b, m >>= 24 - 8 * b;
  if (w == "u32" && m && (m & 0xFFFF) == 0)
    w = "u16", v >>= 16, m >>= 16;
  else if (w == "u32" && m && (m & 0xFFFF0000) == 0)
    w = "u16", add = 2;
  return "u32(" + w + " " + hex_0x(v) + " " + hex_0x(m) + " at " + (offmask ? "nexthdr+" : "") +
         std::to_string(off + add) + ")";
}

// ---- meta: TCA_EM_META_HDR (struct tcf_meta_hdr), LVALUE, RVALUE -----------

struct MetaName {
  const char* name;
  uint16_t id;
  bool var;  // also takes a string (the device name rather than its index)
};
// tc's names (tc/em_meta.c); the first of an id is the one printed.
const MetaName kMetaNames[] = {
    {"random", TCF_META_ID_RANDOM, false},
    {"loadavg_1", TCF_META_ID_LOADAVG_0, false},
    {"loadavg_5", TCF_META_ID_LOADAVG_1, false},
    {"loadavg_15", TCF_META_ID_LOADAVG_2, false},
    {"dev", TCF_META_ID_DEV, true},
    {"priority", TCF_META_ID_PRIORITY, false},
    {"protocol", TCF_META_ID_PROTOCOL, false},
    {"pkt_type", TCF_META_ID_PKTTYPE, false},
    {"pkt_len", TCF_META_ID_PKTLEN, false},
    {"data_len", TCF_META_ID_DATALEN, false},
    {"mac_len", TCF_META_ID_MACLEN, false},
    {"nf_mark", TCF_META_ID_NFMARK, false},
    {"fwmark", TCF_META_ID_NFMARK, false},
    {"tc_index", TCF_META_ID_TCINDEX, false},
    {"rt_classid", TCF_META_ID_RTCLASSID, false},
    {"rt_iif", TCF_META_ID_RTIIF, false},
    {"vlan", TCF_META_ID_VLAN_TAG, false},
    {"sk_family", TCF_META_ID_SK_FAMILY, false},
    {"sk_state", TCF_META_ID_SK_STATE, false},
    {"sk_reuse", TCF_META_ID_SK_REUSE, false},
    {"sk_bind_if", TCF_META_ID_SK_BOUND_IF, true},
    {"sk_refcnt", TCF_META_ID_SK_REFCNT, false},
    {"sk_shutdown", TCF_META_ID_SK_SHUTDOWN, false},
    {"sk_proto", TCF_META_ID_SK_PROTO, false},
    {"sk_type", TCF_META_ID_SK_TYPE, false},
    {"sk_rcvbuf", TCF_META_ID_SK_RCVBUF, false},
    {"sk_rmem", TCF_META_ID_SK_RMEM_ALLOC, false},
    {"sk_wmem", TCF_META_ID_SK_WMEM_ALLOC, false},
    {"sk_omem", TCF_META_ID_SK_OMEM_ALLOC, false},
    {"sk_wmem_queue", TCF_META_ID_SK_WMEM_QUEUED, false},
    {"sk_snd_queue", TCF_META_ID_SK_SND_QLEN, false},
    {"sk_rcv_queue", TCF_META_ID_SK_RCV_QLEN, false},
    {"sk_err_queue", TCF_META_ID_SK_ERR_QLEN, false},
    {"sk_fwd_alloc", TCF_META_ID_SK_FORWARD_ALLOCS, false},
    {"sk_sndbuf", TCF_META_ID_SK_SNDBUF, false},
};

const MetaName* meta_by_name(std::string_view n) {
  for (auto& m : kMetaNames)
    if (n == m.name) return &m;
  return nullptr;
}
const MetaName* meta_by_id(uint16_t id) {
  for (auto& m : kMetaNames)
    if (m.id == id) return &m;
  return nullptr;
}

// One side of a comparison: a meta id (with shift and mask) or a value.
struct MetaObj {
  uint16_t id = TCF_META_ID_VALUE;
  uint8_t type = TCF_META_TYPE_INT;
  uint8_t shift = 0;
  uint32_t num = 0;  // an int value, or an id's mask
  std::string str;   // a string value
  const Tok* mask_tok = nullptr;
};

std::optional<LeafError> parse_meta_obj(Args a, size_t& i, MetaObj& o) {
  const Tok& t = a[i++];
  if (t.type == Tok::Str) {
    if (t.text.empty()) return LeafError{&t, "meta: an empty string matches nothing (the kernel refuses it)"};
    o.type = TCF_META_TYPE_VAR, o.str = t.text;
    return std::nullopt;
  }
  if (t.type != Tok::Word) return LeafError{&t, "meta: expected a meta name or a value"};
  if (auto v = parse_num(t.text, 0xFFFFFFFF)) {
    o.num = static_cast<uint32_t>(*v);
    return std::nullopt;
  }
  const MetaName* m = meta_by_name(t.text);
  if (!m)
    return LeafError{&t, "meta: unknown meta name '" + t.text +
                             "' (nf_mark, priority, vlan, pkt_len, dev, tc_index, rt_classid...)"};
  o.id = m->id;
  while (i < a.size() && a[i].type == Tok::Word && (a[i].text == "shift" || a[i].text == "mask")) {
    const Tok& w = a[i];
    if (i + 1 >= a.size() || a[i + 1].type != Tok::Word) return LeafError{&w, "meta: " + w.text + " needs a number"};
    auto v = parse_num(a[i + 1].text, w.text == "shift" ? 0xFF : 0xFFFFFFFF);
    if (!v)
      return LeafError{&a[i + 1],
                       "meta: " + w.text + " must be a number up to " + (w.text == "shift" ? "255" : "0xffffffff")};
    if (w.text == "shift")
      o.shift = static_cast<uint8_t>(*v);
    else
      o.num = static_cast<uint32_t>(*v), o.mask_tok = &w;
    i += 2;
  }
  return std::nullopt;
}

bool meta_takes(const MetaObj& o, uint8_t type) {
  if (type == TCF_META_TYPE_INT) return true;
  const MetaName* m = meta_by_id(o.id);
  return m && m->var;
}

void meta_value_attr(Bytes& out, uint16_t type, const MetaObj& o) {
  // tc sends an int side always (an id's mask, 0 for none), a string side
  // only when it is a value: a named string (dev) has nothing to send.
  Bytes body;
  if (o.type == TCF_META_TYPE_INT)
    put32(body, o.num);
  else if (o.id == TCF_META_ID_VALUE)
    body.assign(o.str.begin(), o.str.end());
  else
    return;
  put16(out, static_cast<uint16_t>(4 + body.size()));
  put16(out, type);
  out.insert(out.end(), body.begin(), body.end());
  out.resize(nl_align(out.size()), 0);
}

std::optional<LeafError> parse_meta(Args a, Bytes& out, const Tok& name) {
  if (a.empty()) return LeafError{&name, "meta: expected meta(LEFT eq|gt|lt RIGHT)"};
  size_t i = 0;
  MetaObj l, r;
  if (auto e = parse_meta_obj(a, i, l)) return e;
  if (i >= a.size()) return LeafError{&a[i - 1], "meta: expected eq, gt or lt after '" + a[i - 1].text + "'"};
  auto op = parse_op(a[i]);
  if (!op) return LeafError{&a[i], "meta: expected eq, gt or lt, not '" + a[i].text + "'"};
  if (++i >= a.size()) return LeafError{&a[i - 1], "meta: expected a value after " + a[i - 1].text};
  const Tok* right_tok = &a[i];
  if (auto e = parse_meta_obj(a, i, r)) return e;
  if (i < a.size()) return LeafError{&a[i], "meta: unexpected '" + a[i].text + "'"};
  // Types as tc settles them: a named side takes the other side's type when
  // it can (dev compared with a string is the device's name).
  if (l.type != r.type) {
    bool ln = l.id != TCF_META_ID_VALUE, rn = r.id != TCF_META_ID_VALUE;
    if (ln && meta_takes(l, r.type))
      l.type = r.type;
    else if (rn && meta_takes(r, l.type))
      r.type = l.type;
    else
      return LeafError{right_tok, "meta: the two sides compare different types (a string with a number)"};
  }
  for (const MetaObj* o : {&l, &r})
    if (o->type == TCF_META_TYPE_VAR && o->mask_tok)
      return LeafError{o->mask_tok, "meta: mask applies to numbers, not strings"};
  put16(out, 4 + sizeof(tcf_meta_hdr));
  put16(out, TCA_EM_META_HDR);
  put16(out, static_cast<uint16_t>(l.type << 12 | l.id));
  out.push_back(l.shift);
  out.push_back(static_cast<uint8_t>(*op));
  put16(out, static_cast<uint16_t>(r.type << 12 | r.id));
  out.push_back(r.shift);
  out.push_back(0);
  meta_value_attr(out, TCA_EM_META_LVALUE, l);
  meta_value_attr(out, TCA_EM_META_RVALUE, r);
  return std::nullopt;
}

std::string quote(std::string_view s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\')
      q += static_cast<char>(c);
    else
      q += "\\x", q += "0123456789abcdef"[c >> 4], q += "0123456789abcdef"[c & 15];
  }
  return q + "\"";
}

std::optional<std::string> print_meta_obj(uint16_t kind, uint8_t shift, const Attr* v) {
  uint16_t id = TCF_META_ID(kind);
  uint8_t type = TCF_META_TYPE(kind);
  if (type == TCF_META_TYPE_INT && (!v || v->data.size() != 4)) return std::nullopt;
  if (id == TCF_META_ID_VALUE) {
    if (type == TCF_META_TYPE_INT) return std::to_string(v->u32());
    if (!v) return std::nullopt;
    return quote(std::string_view(reinterpret_cast<const char*>(v->data.data()), v->data.size()));
  }
  const MetaName* m = meta_by_id(id);
  if (!m) return std::nullopt;
  std::string s = m->name;
  if (shift) s += " shift " + std::to_string(shift);
  if (type == TCF_META_TYPE_INT && v->u32()) s += " mask " + hex_0x(v->u32());
  return s;
}

std::optional<std::string> print_meta(std::span<const uint8_t> d) {
  AttrTable tb(d, TCA_EM_META_MAX);
  const Attr* h = tb.get(TCA_EM_META_HDR);
  if (!h || h->data.size() != 8) return std::nullopt;
  uint16_t lk = get16(h->data, 0), rk = get16(h->data, 4);
  uint8_t op = h->data[3];
  if (op > 2) return std::nullopt;
  auto l = print_meta_obj(lk, h->data[2], tb.get(TCA_EM_META_LVALUE));
  auto r = print_meta_obj(rk, h->data[6], tb.get(TCA_EM_META_RVALUE));
  if (!l || !r) return std::nullopt;
  return "meta(" + *l + " " + kOps[op] + " " + *r + ")";
}

// ---- raw: ematch(KIND HEX) for everything else ----------------------------

std::optional<LeafError> parse_raw(Args a, Bytes& out, uint16_t& kind, const Tok& name) {
  auto k = a.empty() || a[0].type != Tok::Word ? std::nullopt : parse_num(a[0].text, 0xFFFF);
  if (!k || *k == 0)
    return LeafError{a.empty() ? &name : &a[0], "ematch: expected ematch(KIND HEXBYTES) with KIND 1..65535"};
  kind = static_cast<uint16_t>(*k);
  if (a.size() > 2) return LeafError{&a[2], "ematch: unexpected '" + a[2].text + "'"};
  if (a.size() == 2) {
    const std::string& h = a[1].text;
    if (a[1].type != Tok::Word || h.size() % 2)
      return LeafError{&a[1], "ematch: the data must be hex bytes (an even number of hex digits)"};
    for (size_t i = 0; i < h.size(); i += 2) {
      int hi = hex_digit(h[i]), lo = hex_digit(h[i + 1]);
      if (hi < 0 || lo < 0)
        return LeafError{&a[1], "ematch: the data must be hex bytes (an even number of hex digits)"};
      out.push_back(static_cast<uint8_t>(hi << 4 | lo));
    }
  }
  out.resize(nl_align(out.size()), 0);  // sent padded, and read back so
  return std::nullopt;
}

std::string print_raw(uint16_t kind, std::span<const uint8_t> d) {
  std::string s = "ematch(" + std::to_string(kind);
  if (!d.empty()) s += ' ';
  for (uint8_t b : d) s += "0123456789abcdef"[b >> 4], s += "0123456789abcdef"[b & 15];
  return s + ")";
}

// ---- the expression parser -------------------------------------------------

class Parser {
 public:
  explicit Parser(const std::vector<Tok>& t) : t_(t) {}

  std::optional<Seq> expr(int depth, ParseError& err) {
    Seq s;
    for (;;) {
      Term term;
      if (!this->term(term, depth, err)) return std::nullopt;
      const Tok& n = t_[pos_];
      bool is_and = word_is(n, "and"), is_or = word_is(n, "or");
      term.rel = is_and ? TCF_EM_REL_AND : is_or ? TCF_EM_REL_OR : TCF_EM_REL_END;
      s.push_back(std::move(term));
      if (!is_and && !is_or) return s;
      ++pos_;
    }
  }

  const Tok& peek() const { return t_[pos_]; }

 private:
  bool term(Term& out, int depth, ParseError& err) {
    if (word_is(t_[pos_], "not")) out.invert = true, ++pos_;
    const Tok& t = t_[pos_];
    if (t.type == Tok::LParen) {
      if (depth + 1 > kMaxDepth) return fail(err, t, "parentheses nested deeper than " + std::to_string(kMaxDepth));
      ++pos_;
      auto inner = expr(depth + 1, err);
      if (!inner) return false;
      if (t_[pos_].type != Tok::RParen) return fail(err, t_[pos_], "expected ')' or and/or");
      ++pos_;
      out.child = std::move(*inner);
      return true;
    }
    if (t.type != Tok::Word || word_is(t, "and") || word_is(t, "or") || word_is(t, "not"))
      return fail(err, t,
                  t.type == Tok::End
                      ? "expected a match such as cmp(...), meta(...), u32(...) or '('"
                      : "expected a match such as cmp(...), meta(...), u32(...) or '(', not '" + t.text + "'");
    ++pos_;
    if (t_[pos_].type != Tok::LParen) return fail(err, t_[pos_], "expected '(' after " + t.text);
    size_t first = ++pos_;
    while (t_[pos_].type == Tok::Word || t_[pos_].type == Tok::Str) ++pos_;
    if (t_[pos_].type != Tok::RParen) return fail(err, t_[pos_], "expected ')' to close " + t.text + "(");
    Args args(t_.data() + first, pos_ - first);
    ++pos_;
    std::optional<LeafError> e;
    if (t.text == "cmp")
      out.kind = TCF_EM_CMP, e = parse_cmp(args, out.data, t);
    else if (t.text == "u32")
      out.kind = TCF_EM_U32, e = parse_u32(args, out.data, t);
    else if (t.text == "meta")
      out.kind = TCF_EM_META, e = parse_meta(args, out.data, t);
    else if (t.text == "nbyte")
      out.kind = TCF_EM_NBYTE, e = parse_nbyte(args, out.data, t);
    else if (t.text == "ematch")
      e = parse_raw(args, out.data, out.kind, t);
    else
      return fail(err, t, "unknown match '" + t.text + "' (cmp, meta, u32, nbyte, or ematch(KIND HEX) for others)");
    if (e) return fail(err, *e->at, e->message);
    return true;
  }

  static bool fail(ParseError& err, const Tok& at, std::string msg) {
    err = {at.off, std::move(msg)};
    return false;
  }

  const std::vector<Tok>& t_;
  size_t pos_ = 0;
};

std::optional<Seq> parse(std::string_view text, ParseError& err) {
  std::vector<Tok> toks;
  if (!tokenize(text, toks, err)) return std::nullopt;
  if (toks.size() == 1) {
    err = {0, "empty match expression"};
    return std::nullopt;
  }
  Parser p(toks);
  auto s = p.expr(0, err);
  if (!s) return std::nullopt;
  if (p.peek().type != Tok::End) {
    err = {p.peek().off, "expected and, or, or the end, not '" + p.peek().text + "'"};
    return std::nullopt;
  }
  return s;
}

// ---- printing ----------------------------------------------------------------

// A match's text in the modelled form when that form gives back the same
// bytes, else raw.
std::string print_leaf(uint16_t kind, std::span<const uint8_t> d) {
  std::optional<std::string> s;
  if (kind == TCF_EM_CMP)
    s = print_cmp(d);
  else if (kind == TCF_EM_U32)
    s = print_u32(d);
  else if (kind == TCF_EM_META)
    s = print_meta(d);
  else if (kind == TCF_EM_NBYTE)
    s = print_nbyte(d);
  if (s) {
    ParseError err;
    auto back = parse(*s, err);
    if (back && back->size() == 1 && (*back)[0].kind == kind && std::ranges::equal((*back)[0].data, d)) return *s;
  }
  return print_raw(kind, d);
}

std::string print_seq(const Seq& s) {
  std::string out;
  for (const Term& t : s) {
    if (t.invert) out += "not ";
    out += t.kind == TCF_EM_CONTAINER ? "(" + print_seq(t.child) + ")" : print_leaf(t.kind, t.data);
    if (t.rel == TCF_EM_REL_AND)
      out += " and ";
    else if (t.rel == TCF_EM_REL_OR)
      out += " or ";
  }
  return out;
}

// ---- the kernel's flat list ------------------------------------------------------

struct Flat {
  uint16_t flags;
  uint16_t kind;
  const Bytes* data;  // a match's bytes
  uint32_t ref;       // a container's first child
};

// tc's order (flatten_tree): a sequence takes consecutive indexes, then each
// of its containers in turn appends its own sequence and recurses.
void layout(const Seq& s, std::vector<Flat>& flat, size_t base) {
  for (size_t i = 0; i < s.size(); ++i) {
    const Term& t = s[i];
    flat[base + i] = {static_cast<uint16_t>(t.rel | (t.invert ? TCF_EM_INVERT : 0)), t.kind, &t.data, 0};
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].kind != TCF_EM_CONTAINER) continue;
    size_t child = flat.size();
    flat.resize(child + s[i].child.size());
    flat[base + i].ref = static_cast<uint32_t>(child);
    layout(s[i].child, flat, child);
  }
}

// Reads the sequence starting at `at`; `budget` bounds the work a tree whose
// containers share children could cost.
bool read_seq(const std::vector<std::span<const uint8_t>>& list, size_t at, int depth, size_t& budget, Seq& out) {
  for (size_t i = at;; ++i) {
    if (i >= list.size() || budget == 0) return false;
    --budget;
    auto e = list[i];
    if (e.size() < sizeof(tcf_ematch_hdr)) return false;
    tcf_ematch_hdr h;
    std::memcpy(&h, e.data(), sizeof h);
    Term t;
    t.invert = h.flags & TCF_EM_INVERT;
    t.rel = h.flags & TCF_EM_REL_MASK;
    if (t.rel == TCF_EM_REL_MASK) return false;
    t.kind = h.kind;
    auto data = e.subspan(sizeof h);
    if (h.kind == TCF_EM_CONTAINER) {
      if (data.size() < 4 || depth + 1 > kMaxDepth) return false;
      uint32_t ref = get32(data, 0);
      if (ref <= i || ref >= list.size()) return false;  // the kernel allows forward references only
      if (!read_seq(list, ref, depth + 1, budget, t.child)) return false;
    } else {
      // Padded to 4 as the kernel and tc write it (the nest's length
      // counts the padding), so a short attribute reads as it will be sent.
      t.data.assign(data.begin(), data.end());
      t.data.resize(nl_align(t.data.size()), 0);
    }
    bool last = t.rel == TCF_EM_REL_END;
    out.push_back(std::move(t));
    if (last) return true;
  }
}

}  // namespace

std::optional<std::string> canonical(std::string_view text, ParseError& err) {
  auto s = parse(text, err);
  if (!s) return std::nullopt;
  return print_seq(*s);
}

bool encode_tree(std::string_view text, MsgWriter& w, ParseError& err) {
  auto s = parse(text, err);
  if (!s) return false;
  std::vector<Flat> flat(s->size());
  layout(*s, flat, 0);
  tcf_ematch_tree_hdr th{static_cast<uint16_t>(flat.size()), TCF_EM_PROG_TC};
  w.attr(TCA_EMATCH_TREE_HDR, &th, sizeof th);
  size_t list = w.nest_begin(TCA_EMATCH_TREE_LIST);
  for (size_t i = 0; i < flat.size(); ++i) {
    size_t m = w.nest_begin(static_cast<uint16_t>(i + 1));
    tcf_ematch_hdr h{0, flat[i].kind, flat[i].flags, 0};
    w.put_struct(h);
    if (flat[i].kind == TCF_EM_CONTAINER)
      w.put_struct(flat[i].ref);
    else if (!flat[i].data->empty())
      w.put_raw(flat[i].data->data(), flat[i].data->size());
    w.nest_end(m);
  }
  w.nest_end(list);
  return true;
}

std::vector<uint16_t> match_kinds(std::string_view text) {
  ParseError err;
  auto s = parse(text, err);
  if (!s) return {};
  std::vector<Flat> flat(s->size());
  layout(*s, flat, 0);
  std::vector<uint16_t> out;
  for (const Flat& m : flat)
    if (m.kind != TCF_EM_CONTAINER && std::find(out.begin(), out.end(), m.kind) == out.end()) out.push_back(m.kind);
  return out;
}

std::optional<std::string> decode_tree(std::span<const uint8_t> payload) {
  AttrTable tb(payload, TCA_EMATCH_TREE_MAX);
  const Attr* h = tb.get(TCA_EMATCH_TREE_HDR);
  if (!h || h->data.size() < sizeof(tcf_ematch_tree_hdr)) return std::nullopt;
  auto th = h->as<tcf_ematch_tree_hdr>();
  if (th.nmatches == 0) return std::string();
  const Attr* l = tb.get(TCA_EMATCH_TREE_LIST);
  if (!l) return std::nullopt;
  // Matches are numbered 1..nmatches in order (the kernel refuses others).
  std::vector<std::span<const uint8_t>> list;
  AttrIter it(l->data);
  Attr a;
  while (list.size() < th.nmatches && it.next(a)) {
    if (a.type != list.size() + 1) return std::nullopt;
    list.push_back(a.data);
  }
  if (list.size() != th.nmatches) return std::nullopt;
  Seq s;
  size_t budget = 4 * list.size() + 64;
  if (!read_seq(list, 0, 0, budget, s)) return std::nullopt;
  return print_seq(s);
}

// ---- the `match` field and tc's words for it ---------------------------------

namespace {

// Where offset `off` of a scalar's text is in the file: exact for a scalar
// on one line whose text appears as written (no escapes, no folding), else
// the scalar's start.
SourceLoc loc_in(const Node& n, size_t off) {
  SourceLoc at = n.loc;
  if (!at.known() || n.scalar.find('\n') != std::string::npos) return at;
  std::string line = SourceFiles::instance().line_text(at.file, at.line);
  size_t start = at.col - 1 + (n.plain ? 0 : 1);
  if (start <= line.size() && line.compare(start, n.scalar.size(), n.scalar) == 0)
    at.col = static_cast<uint32_t>(start + off + 1);
  return at;
}

bool match_parse(const Node& n, Value& out, Diagnostics& d) {
  if (!n.is_scalar()) {
    d.error(n.loc, std::string("expected an ematch expression such as \"cmp(u16 at 0 layer link mask 0xffff eq 0x800) "
                               "and not meta(nf_mark eq 5)\", not a ") +
                       n.type_name());
    return false;
  }
  ParseError err;
  auto text = canonical(n.scalar, err);
  if (!text) {
    d.error(loc_in(n, err.offset), "match: " + err.message);
    return false;
  }
  out = std::move(*text);
  return true;
}

void match_emit(const Value& v, YamlOut& y) {
  y.str(std::get<std::string>(v));
}
std::string match_describe(const Value& v) {
  return std::get<std::string>(v);
}

// The tree as a nest of its own (the body encode_tree writes); a text that
// does not parse (it was canonical when loaded) is an error at the object.
void match_put(const Value& v, uint16_t attr, const KindCtx& ctx, MsgWriter& w) {
  auto* text = std::get_if<std::string>(&v);
  if (!text) return;
  size_t nest = w.nest_begin(attr);
  ParseError err;
  if (!encode_tree(*text, w, err) && ctx.diags) ctx.diags->error(ctx.loc, "match: " + err.message);
  w.nest_end(nest);
}

// The kernel dumps an empty tree for a filter without one (absent), and a
// tree decode_tree cannot follow reads as a text that says so (compared
// unequal to any file's, never silent).
std::optional<Value> match_get(const Attr& a) {
  auto text = decode_tree(a.data);
  if (!text) return Value{std::string("<ematch tree tcsync cannot read>")};
  if (text->empty()) return std::nullopt;
  return Value{std::move(*text)};
}

}  // namespace

const CustomType kMatchType{
    .schema_name = "ematch",
    .parse = match_parse,
    .emit = match_emit,
    .describe = match_describe,
    .json_schema =
        R"({"description": "An ematch expression in tc's grammar (tc-ematch(8)): cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not (meta(nf_mark eq 5) or u32(u8 0x6 0xff at 9)).", "type": "string", "minLength": 1})",
    .put = match_put,
    .get = match_get,
};

// tc's ematch parser reads words until one that is not part of the
// expression; here, up to the filter's own words. The words are joined
// with single spaces, so a quoted expression and an unquoted one read the
// same; the table's parser checks the expression.
bool tc_match(TcCursor& c, const TcWord& kw, Node& body) {
  std::string expr;
  SourceLoc loc = kw.loc;
  while (!c.done()) {
    const TcWord& w = c.peek();
    if (w.text == "classid" || w.text == "flowid" || w.text == "action" || w.text == "actions" || w.text == "police")
      break;
    if (expr.empty())
      loc = w.loc;
    else
      expr += ' ';
    expr += c.take().text;
  }
  if (expr.empty()) {
    c.diags().error(kw.loc, "'match' needs an ematch expression after it, such as 'meta(nf_mark eq 5)'");
    return false;
  }
  tc_put(body, "match", kw.loc, tc_scalar(expr, loc));
  return true;
}

}  // namespace tcsync::ematch
