#include "kinds/bpf_bytecode.h"

#include <linux/filter.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <vector>

#include "base/units.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

// BPF_MAXINSNS: the kernel's bound for a classic program.
constexpr size_t kMaxInsns = 4096;

// "N,code jt jf k,..." -> instructions; nullopt when not that form (tc's
// bpf_parse_string: N must equal the count that follows).
std::optional<std::vector<sock_filter>> parse_ops(std::string_view s) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : std::string(s) + ",") {
    if (c == ',')
      parts.push_back(cur), cur.clear();
    else if (c != '\n')
      cur += c;
  }
  auto n = parts.empty() ? std::nullopt : parse_uint(parts[0]);
  if (!n || *n == 0 || *n > kMaxInsns || *n != parts.size() - 1) return std::nullopt;
  std::vector<sock_filter> ops;
  for (size_t i = 1; i < parts.size(); ++i) {
    unsigned code, jt, jf;
    unsigned long long k;
    char extra;
    if (std::sscanf(parts[i].c_str(), "%u %u %u %llu %c", &code, &jt, &jf, &k, &extra) != 4 || code > 0xFFFF ||
        jt > 0xFF || jf > 0xFF || k > 0xFFFFFFFF)
      return std::nullopt;
    ops.push_back(sock_filter{static_cast<uint16_t>(code), static_cast<uint8_t>(jt), static_cast<uint8_t>(jf),
                              static_cast<uint32_t>(k)});
  }
  return ops;
}

std::string ops_text(std::span<const sock_filter> ops) {
  std::string s = std::to_string(ops.size());
  for (const sock_filter& f : ops)
    s += "," + std::to_string(f.code) + " " + std::to_string(f.jt) + " " + std::to_string(f.jf) + " " +
         std::to_string(f.k);
  return s;
}

bool bytecode_parse(const Node& n, Value& out, Diagnostics& d) {
  auto ops = n.is_scalar() ? parse_ops(n.scalar) : std::nullopt;
  if (!ops) {
    d.error(n.loc,
            "'bytecode' is a classic BPF program as tc takes it: \"N,code jt jf k,...\" with N instructions (at most "
            "4096), "
            "such as \"4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0\"");
    return false;
  }
  out = ops_text(*ops);
  return true;
}
std::string text_describe(const Value& v) {
  auto* s = std::get_if<std::string>(&v);
  return s ? *s : "?";
}
void text_emit(const Value& v, YamlOut& y) {
  y.str(text_describe(v));
}

}  // namespace

const CustomType kBpfBytecodeType{
    .schema_name = "bpf_bytecode",
    .parse = bytecode_parse,
    .emit = text_emit,
    .describe = text_describe,
    .json_schema =
        R"({"description": "A classic BPF program as tc's bytecode: \"N,code jt jf k,...\" (decimal), as bpf_asm -c or tcpdump -ddd print it.", "type": "string", "pattern": "^[0-9]+(,[0-9]+ [0-9]+ [0-9]+ [0-9]+)+$"})",
};

void encode_bpf_bytecode(MsgWriter& w, const std::string& text, uint16_t len_attr, uint16_t ops_attr) {
  auto ops = parse_ops(text);
  if (!ops) return;
  w.attr_u16(len_attr, static_cast<uint16_t>(ops->size()));
  w.attr(ops_attr, ops->data(), ops->size() * sizeof(sock_filter));
}

std::optional<std::string> decode_bpf_bytecode(const Attr* len, const Attr* ops) {
  if (!len && !ops) return std::nullopt;
  if (len && ops && len->data.size() >= 2 && len->u16() &&
      ops->data.size() == size_t{len->u16()} * sizeof(sock_filter)) {
    std::vector<sock_filter> v(len->u16());
    std::memcpy(v.data(), ops->data.data(), ops->data.size());
    return ops_text(v);
  }
  return std::string("<bpf instructions tcsync cannot read>");
}

bool tc_bpf_bytecode(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a program such as '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0'");
  if (!v) return false;
  tc_put(body, "bytecode", kw.loc, tc_scalar(v->text, v->loc));
  return true;
}

bool tc_bpf_bytecode_file(TcCursor& c, const TcWord& kw, Node& body) {
  const TcWord* v = c.value(kw, "a file holding a program such as '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0'");
  if (!v) return false;
  std::ifstream in(v->text, std::ios::binary);
  if (!in) {
    c.diags().error(v->loc, "cannot read '" + v->text + "': " + std::strerror(errno) + " (tc reads it too)");
    return false;
  }
  std::string text;
  char prev = ' ';
  for (auto it = std::istreambuf_iterator<char>(in); it != std::istreambuf_iterator<char>(); ++it) {
    char ch = *it;
    if (ch == '\n') {
      if (prev != ',') text += ',';
      prev = ',';
    } else if (ch == ' ' || ch == '\t') {
      if (prev != ' ') text += ch;
      prev = ' ';
    } else {
      text += ch;
      prev = ch;
    }
    if (text.size() > kMaxInsns * 32) break;  // past any program: the parser refuses it
  }
  // tc stops at the count it read first: what trails the last instruction
  // (the file's last line break) says nothing.
  while (!text.empty() && (text.back() == ',' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  tc_put(body, "bytecode", kw.loc, tc_scalar(text, v->loc));
  return true;
}

}  // namespace tcsync
