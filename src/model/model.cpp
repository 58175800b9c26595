#include "model/model.h"

#include <charconv>
#include <cstdio>

#include "base/handle.h"
#include "base/units.h"

namespace tcsync {

Device Device::without_filters() const {
  Device d;
  d.name = name;
  d.loc = loc;
  d.qdiscs = qdiscs;
  d.classes = classes;
  d.chains = chains;
  d.atomic = atomic;
  d.scoped = scoped;
  d.own = own;
  d.own_loc = own_loc;
  d.block = block;
  return d;
}

Device* State::find(const std::string& name) {
  for (auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}
const Device* State::find(const std::string& name) const {
  for (auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}
Device& State::get_or_add(const std::string& name) {
  if (auto* d = find(name)) return *d;
  devices.push_back(Device{name, {}, {}, {}, {}});
  return devices.back();
}

Device* State::find_block(uint32_t index) {
  for (auto& b : blocks)
    if (b.block == index) return &b;
  return nullptr;
}
const Device* State::find_block(uint32_t index) const {
  for (auto& b : blocks)
    if (b.block == index) return &b;
  return nullptr;
}
Device& State::get_or_add_block(uint32_t index) {
  if (auto* b = find_block(index)) return *b;
  Device b{block_name(index), {}, {}, {}, {}};
  b.block = index;
  blocks.push_back(std::move(b));
  return blocks.back();
}

std::string describe(const Chain& c, bool on_block) {
  std::string s = "chain " + std::to_string(c.index);
  if (!on_block) s += " " + describe_filter_parent(c.parent);
  if (!c.kind.empty())
    s += " (template " + c.kind + (c.protocol ? " protocol " + format_protocol(c.protocol) : std::string()) + ")";
  return s;
}

std::string block_name(uint32_t index) {
  return "block " + std::to_string(index);
}

std::pair<uint32_t, uint32_t> bound_blocks(const Qdisc& q) {
  if (!qdisc_ops(q.ops).options_top_level) return {0, 0};
  // Both hook kinds list ingress_block first, clsact egress_block second.
  auto in = q.opts.num(0);
  auto eg = q.ops->fields.size() > 1 ? q.opts.num(1) : std::nullopt;
  return {static_cast<uint32_t>(in.value_or(0)), static_cast<uint32_t>(eg.value_or(0))};
}

std::vector<uint32_t> all_bound_blocks(const Qdisc& q) {
  std::vector<uint32_t> out;
  auto [in, eg] = bound_blocks(q);
  for (uint32_t b : {in, eg})
    if (b) out.push_back(b);
  for (uint16_t f : qdisc_ops(q.ops).block_fields)
    if (auto b = q.opts.num(f); b && *b) out.push_back(static_cast<uint32_t>(*b));
  return out;
}

std::string format_filter_handle(const KindOps* ops, uint32_t h) {
  if (auto* tables = shared_tables(ops)) return tables->format_handle(h);
  // "0x%x" without printf: a plan prints one per rule.
  char b[16] = {'0', 'x'};
  auto r = std::to_chars(b + 2, b + sizeof b, h, 16);
  return std::string(b, r.ptr);
}

std::optional<uint32_t> parse_filter_handle(const KindOps* ops, std::string_view s) {
  if (auto* tables = shared_tables(ops)) return tables->parse_handle(s);
  auto v = parse_uint(s);
  if (!v || *v > 0xFFFFFFFFu) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::string describe_filter_parent(uint32_t parent) {
  if (parent == kHandleClsactIngress) return "ingress";
  if (parent == kHandleClsactEgress) return "egress";
  return format_handle(parent);
}

static std::string qdisc_parent(uint32_t parent) {
  if (parent == kHandleIngress) return "ingress";
  if (parent == kHandleRoot) return "root";
  return "parent " + format_handle(parent);
}

std::string describe(const Qdisc& q) {
  return "qdisc " + q.kind + " " + format_handle(q.handle) + " " + qdisc_parent(q.parent);
}

std::string describe(const Class& c) {
  return "class " + c.kind + " " + format_handle(c.classid) + " parent " + format_handle(c.parent);
}

std::string describe(const Action& a) {
  return "action " + a.kind + (a.index ? " index " + std::to_string(*a.index) : std::string());
}

void append_describe(std::string& s, const Filter& f, bool on_block) {
  s += "filter ";
  s += f.kind;
  if (!on_block) {  // a block's filters have no parent but the block
    s += ' ';
    s += describe_filter_parent(f.key.parent);
  }
  if (f.key.chain) {
    s += " chain ";
    s += std::to_string(f.key.chain);
  }
  s += " pref ";
  s += std::to_string(f.key.pref);
  s += " protocol ";
  s += format_protocol(f.key.protocol);
  if (f.empty_list) {
    s += " (empty list)";
    return;
  }
  s += " handle ";
  s += format_filter_handle(f.ops, f.key.handle);
  if (!f.name.empty()) {
    s += " (";
    s += f.name;
    s += ')';
  }
}

std::string describe(const Filter& f, bool on_block) {
  std::string s;
  s.reserve(64 + f.name.size());
  append_describe(s, f, on_block);
  return s;
}

}  // namespace tcsync
