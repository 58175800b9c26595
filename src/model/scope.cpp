#include "model/scope.h"

#include <algorithm>

namespace tcsync {

namespace {

// Filters of an ingress qdisc may name their parent "ffff:" or "ingress":
// one place.
uint32_t place(uint32_t parent) {
  return parent == kHandleIngressQdisc ? kHandleClsactIngress : parent;
}

bool below_root(uint32_t parent) {
  return parent != kHandleRoot && parent != kHandleIngress;
}

}  // namespace

Ownership::Ownership(const Device& want, const Device* have) {
  if (!want.scoped) return;
  regions_ = &want.own;
  block_ = want.block != 0;
  for (auto& r : want.own)
    if (r.tree) majors_.insert(r.major);
  if (majors_.empty()) return;
  // A qdisc hanging below an owned tree is part of it: repeat until no
  // qdisc joins (a tree is at most a few levels deep).
  auto grow = [&](const std::vector<Qdisc>& qs) {
    bool grew = false;
    for (auto& q : qs)
      if (below_root(q.parent) && majors_.count(handle_major(q.parent)) &&
          majors_.insert(handle_major(q.handle)).second)
        grew = true;
    return grew;
  };
  // Both sides grow in each round (no short circuit): a qdisc of one may
  // hang under a major the other just added.
  for (bool grew = true; grew;) {
    bool wanted = grow(want.qdiscs);
    bool had = have && grow(have->qdiscs);
    grew = wanted || had;
  }
}

bool Ownership::owns(const Qdisc& q) const {
  if (!regions_) return true;
  // The hook qdisc's handle is ffff: whatever the file says.
  return majors_.count(q.parent == kHandleIngress ? kHandleIngressQdisc : handle_major(q.handle)) != 0;
}

bool Ownership::owns(const Class& c) const {
  return !regions_ || majors_.count(handle_major(c.classid));
}

bool Ownership::owns(const Filter& f) const {
  return owns_filter_at(f.key.parent, f.key.chain, f.key.pref);
}

bool Ownership::owns_filter_at(uint32_t parent, uint32_t chain, uint16_t pref) const {
  if (!regions_) return true;
  if (!block_ && majors_.count(handle_major(parent))) return true;
  for (auto& r : *regions_)
    if (!r.tree && (block_ || place(r.parent) == place(parent)) && (!r.chain || *r.chain == chain) &&
        pref >= r.pref_lo && pref <= r.pref_hi)
      return true;
  return false;
}

// Deleting or re-creating a chain flushes every filter in it: a chain is
// owned only with all of them, whatever their prefs.
bool Ownership::owns(const Chain& c) const {
  if (!regions_) return true;
  if (!block_ && majors_.count(handle_major(c.parent))) return true;
  for (auto& r : *regions_)
    if (!r.tree && (block_ || place(r.parent) == place(c.parent)) && (!r.chain || *r.chain == c.index) &&
        r.pref_lo <= 1 && r.pref_hi == 0xFFFF)
      return true;
  return false;
}

std::string describe(const OwnRegion& r, bool on_block) {
  if (r.tree) return "qdisc " + format_handle(r.major) + " and below";
  std::string s = on_block ? std::string("filters") : describe_filter_parent(place(r.parent));
  if (r.chain) s += " chain " + std::to_string(*r.chain);
  if (r.pref_lo > 1 || r.pref_hi < 0xFFFF)
    s += r.pref_lo == r.pref_hi ? " pref " + std::to_string(r.pref_lo)
                                : " prefs " + std::to_string(r.pref_lo) + "-" + std::to_string(r.pref_hi);
  return s;
}

std::string describe_scope(const Device& d) {
  if (d.own.empty()) return "nothing";
  std::string s;
  for (auto& r : d.own) s += (s.empty() ? "" : ", ") + describe(r, d.block != 0);
  return s;
}

void cut_to_scope(const State& file, State& live) {
  auto cut = [](const Device& want, Device& have) {
    if (!want.scoped) return;
    const Ownership own(want, &have);
    bool hook =
        std::any_of(want.qdiscs.begin(), want.qdiscs.end(), [](const Qdisc& q) { return q.parent == kHandleIngress; });
    std::erase_if(have.qdiscs, [&](const Qdisc& q) { return !own.owns(q) && !(hook && q.parent == kHandleIngress); });
    std::erase_if(have.classes, [&](const Class& c) { return !own.owns(c); });
    std::erase_if(have.filters, [&](const Filter& f) { return !own.owns(f); });
    std::erase_if(have.chains, [&](const Chain& c) { return !own.owns(c); });
    have.scoped = true;
    have.own = want.own;
  };
  for (auto& want : file.devices)
    if (Device* have = live.find(want.name)) cut(want, *have);
  for (auto& want : file.blocks)
    if (Device* have = live.find_block(want.block)) cut(want, *have);
}

}  // namespace tcsync
