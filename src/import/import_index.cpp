// Where the objects of a script's earlier lines are (importer.h): the
// questions each line asks of them, answered in time that does not grow
// with the script. Every answer is the one the scan of objs_ it replaced
// gave: the same object, first or last in objs_ order as that scan took it.
#include <algorithm>

#include "base/handle.h"
#include "import/importer.h"

namespace tcsync::importing {

size_t Importer::FKeyHash::operator()(const FKey& k) const {
  uint64_t a = (uint64_t{k.dev} << 32) ^ k.key.parent;
  uint64_t b = (uint64_t{k.key.chain} << 32) ^ (uint64_t{k.key.pref} << 16) ^ k.key.protocol;
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
  h ^= (uint64_t{k.key.handle} + 0x94D049BB133111EBull) * 0xBF58476D1CE4E5B9ull;
  return static_cast<size_t>(h ^ (h >> 31));
}

// Device names as small numbers: the keys below compare integers, not names.
uint32_t Importer::dev_id(const std::string& dev) {
  auto [it, made] = dev_ids_.try_emplace(dev, static_cast<uint32_t>(dev_ids_.size()));
  if (made) dev_noted_.push_back(false);
  return it->second;
}

void Importer::sync() {
  if (key_prev_.size() < objs_.size()) key_prev_.resize(objs_.size(), kNoPos);
  for (; synced_ < objs_.size(); ++synced_) index_obj(synced_);
}

void Importer::index_obj(Pos p) {
  const Obj& o = objs_[p];
  const uint32_t dev = dev_id(o.dev);
  switch (o.type) {
    case ObjType::Qdisc:
      qdisc_by_parent_[dev_key(dev, o.parent)].push_back(p);
      qdisc_by_handle_[dev_key(dev, o.handle)].push_back(p);
      qdisc_by_parent_major_[dev_key(dev, handle_major(o.parent))].push_back(p);
      break;
    case ObjType::Class:
      class_by_id_[dev_key(dev, o.handle)].push_back(p);
      class_by_major_[dev_key(dev, handle_major(o.handle))].push_back(p);
      break;
    case ObjType::Filter: {
      auto [it, first] = key_last_.try_emplace(FKey{dev, o.key}, p);
      key_prev_[p] = first ? kNoPos : it->second;
      it->second = p;
      ListSlots& l = lists_[{dev, o.key.parent, o.key.chain, o.key.pref, o.key.protocol}];
      l.all.push_back(p);
      if (o.empty_list) l.empties.push_back(p);
      index_actions(p);
      break;
    }
    default:
      break;
  }
}

// The actions of filter P that carry an index, under each key of their
// entry (filter_action asks for an entry that has the kind among its keys).
void Importer::index_actions(Pos p) {
  const Node* acts = objs_[p].node.find("actions");
  if (!acts) return;
  for (size_t i = 0; i < acts->seq.size(); ++i) {
    const Node& e = acts->seq[i];
    const Node* idx = e.find("index");
    if (!idx) continue;
    for (auto& kv : e.map) action_index_[{kv.first.scalar, idx->scalar}].insert({p, static_cast<uint32_t>(i)});
  }
}

// place() rewrote objs_[P]: a replaced qdisc may have another handle, a
// filter other actions. Its other keys are those it was found by.
void Importer::reindex(Pos p) {
  if (p >= synced_) return;  // sync() has yet to read it
  const Obj& o = objs_[p];
  if (o.type == ObjType::Qdisc) {
    auto& slots = qdisc_by_handle_[dev_key(dev_id(o.dev), o.handle)];
    auto at = std::lower_bound(slots.begin(), slots.end(), p);
    if (at == slots.end() || *at != p) slots.insert(at, p);
  } else if (o.type == ObjType::Filter) {
    index_actions(p);
  }
}

// The first live object of SLOTS (objs_ order) whose handle is still
// HANDLE when CHECK_HANDLE (a replaced qdisc may have left it); the slots
// before it are dropped, as they are dead for good.
Obj* Importer::first_live(std::vector<Pos>& slots, uint32_t handle, bool check_handle) {
  size_t i = 0;
  while (i < slots.size() && (objs_[slots[i]].dead || (check_handle && objs_[slots[i]].handle != handle))) ++i;
  slots.erase(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(i));
  return slots.empty() ? nullptr : &objs_[slots.front()];
}

Importer::Parents Importer::parents_of_block(const std::string& dev, uint32_t block) {
  Parents ps;
  if (block != kHandleRoot) ps.v[ps.n++] = block;
  if (block_of(dev, kHandleRoot) == block) ps.v[ps.n++] = kHandleRoot;
  return ps;
}

Obj* Importer::last_with_key(uint32_t dev, const FilterKey& key) {
  sync();
  auto it = key_last_.find(FKey{dev, key});
  if (it == key_last_.end()) return nullptr;
  Pos p = it->second;
  while (p != kNoPos && objs_[p].dead) p = key_prev_[p];
  if (p == kNoPos) {
    key_last_.erase(it);
    return nullptr;
  }
  it->second = p;  // the dead ones after it are gone for good
  return &objs_[p];
}

void Importer::each_with_key(uint32_t dev, const FilterKey& key, const std::function<void(Obj&)>& fn) {
  sync();
  auto it = key_last_.find(FKey{dev, key});
  if (it == key_last_.end()) return;
  // Walks the chain from the last, unlinking the dead.
  Pos* link = &it->second;
  while (*link != kNoPos) {
    Pos p = *link;
    if (objs_[p].dead) {
      *link = key_prev_[p];
      continue;
    }
    fn(objs_[p]);
    link = &key_prev_[p];
  }
  if (it->second == kNoPos) key_last_.erase(it);
}

// The filter an earlier line added with the line's key: the last one, as
// the scan that looked for it kept the last match.
Obj* Importer::filter_existing(const std::string& dev, const FilterKey& key) {
  return last_with_key(dev_id(dev), key);
}

// The class DEV has with CLASSID, the first as the scan found it.
Obj* Importer::find_class(const std::string& dev, uint32_t classid) {
  sync();
  auto it = class_by_id_.find(dev_key(dev_id(dev), classid));
  return it == class_by_id_.end() ? nullptr : first_live(it->second, 0, false);
}

// A deleted ingress or clsact qdisc takes the filters of its sides.
void Importer::drop_hook_filters(const std::string& dev) {
  sync();
  const uint32_t d = dev_id(dev);
  for (uint32_t parent : {kHandleClsactIngress, kHandleClsactEgress, kHandleIngressQdisc})
    for (auto it = lists_.lower_bound({d, parent, 0u, uint16_t{0}, uint16_t{0}});
         it != lists_.end() && std::get<0>(it->first) == d && std::get<1>(it->first) == parent; ++it) {
      for (Pos s : it->second.all) objs_[s].dead = true;
      it->second.all.clear();
      it->second.empties.clear();
    }
}

}  // namespace tcsync::importing
