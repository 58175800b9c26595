#include "model.h"

#include <cstdio>

#include "handle.h"
#include "units.h"

namespace tcsync {

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

std::string format_filter_handle(const KindOps* ops, uint32_t h) {
  if (ops && ops->format_filter_handle) return ops->format_filter_handle(h);
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", h);
  return b;
}

std::optional<uint32_t> parse_filter_handle(const KindOps* ops, std::string_view s) {
  if (ops && ops->parse_filter_handle) return ops->parse_filter_handle(s);
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

std::string describe(const Filter& f) {
  // Appends into one string: a plan prints this once per rule.
  std::string s;
  s.reserve(64 + f.name.size());
  s += "filter ";
  s += f.kind;
  s += ' ';
  s += describe_filter_parent(f.key.parent);
  if (f.key.chain) {
    s += " chain ";
    s += std::to_string(f.key.chain);
  }
  s += " pref ";
  s += std::to_string(f.key.pref);
  s += " protocol ";
  s += format_protocol(f.key.protocol);
  s += " handle ";
  s += format_filter_handle(f.ops, f.key.handle);
  if (!f.name.empty()) {
    s += " (";
    s += f.name;
    s += ')';
  }
  return s;
}

}  // namespace tcsync
