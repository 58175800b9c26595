// The model: what a file declares (desired) and what the kernel holds (live),
// in one shape so the differ compares like with like.
//
// Identities (what makes two objects "the same" across desired and live):
//   qdisc:  (device, parent)
//   class:  (device, classid)
//   filter: (device, parent, chain, pref, protocol, handle)
// Everything else is an attribute that may change.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/boxed.h"
#include "base/diag.h"
#include "model/kind.h"

namespace tcsync {

using Opaque = std::vector<uint8_t>;

// What the kernel reports of an object that no kind table reads, as the
// kernel's own attribute bytes (headers and padding included), so tcsync
// carries it back exactly and compares it byte for byte: never silent.
//   options: inside TCA_OPTIONS (an action's TCA_ACT_OPTIONS). For a kind
//            without a table, the whole payload; else the attributes its
//            decoder never asked for (flower's mpls_label on an older table,
//            red's qevent blocks...), sent again after the table's own.
//   attrs:   beside TCA_KIND in the message (an action's entry): TCA_STAB,
//            an action's hw_stats or skip_hw flags...
// Files carry them as hex (`raw_options`, `raw_attrs`), as dump writes them.
// Most objects have neither: both parts live in one allocation made only
// when one is set, so an object without them pays one pointer (1M rules).
class Raw {
 public:
  const Opaque& options() const { return parts_ ? parts_->options : kNone; }
  const Opaque& attrs() const { return parts_ ? parts_->attrs : kNone; }
  bool empty() const { return !parts_; }
  void set_options(Opaque bytes) { set(&Parts::options, std::move(bytes)); }
  void set_attrs(Opaque bytes) { set(&Parts::attrs, std::move(bytes)); }
  bool operator==(const Raw& o) const { return options() == o.options() && attrs() == o.attrs(); }

 private:
  struct Parts {
    Opaque options;
    Opaque attrs;
  };
  // Keeps `parts_` null whenever both parts are empty, so empty() is a test.
  void set(Opaque Parts::*part, Opaque bytes) {
    if (!parts_ && bytes.empty()) return;
    if (!parts_) parts_.emplace();
    (*parts_).*part = std::move(bytes);
    if (parts_->options.empty() && parts_->attrs.empty()) parts_.reset();
  }
  static inline const Opaque kNone{};
  Boxed<Parts> parts_;
};

struct Action {
  std::string kind;
  const KindOps* ops = nullptr;  // null: no table for the kind, see raw
  Options opts;
  Opaque cookie;  // TCA_ACT_COOKIE, up to 16 bytes
  Raw raw;
  // The 8-byte members come first, then these smaller ones, packed.
  std::optional<uint32_t> index;  // shared/explicit index; absent = kernel's
  // Per-CPU statistics (the kernel's default; off unless asked, since their
  // allocation is most of an action insert's cost: tcsync sends
  // TCA_ACT_FLAGS_NO_PERCPU_STATS otherwise). Desired: absent = not declared
  // (off, and not compared); live: always set, from TCA_ACT_FLAGS.
  std::optional<bool> percpu_stats;
  // Desired: `ref: KIND/N`, the action N of the table (ActionTable) that the
  // filter binds; the table, not the filter, declares its options.
  bool ref = false;
  SourceLoc loc;
  // Live: the kernel's reference counts (tc_gen). An action made by `tc
  // actions add` (RTM_NEWACTION) holds one reference no filter does, so
  // refcnt > bindcnt marks a table action; bindcnt > 1: several filters share it.
  int32_t refcnt = 0;
  int32_t bindcnt = 0;
  bool standalone() const { return refcnt > bindcnt; }
};

// The standalone action table of the network namespace (tc actions ...):
// actions identified by (kind, index), shared by the filters that refer to
// them. Desired: `present` when a file has an `actions:` section; the files
// then own the table: a table action they do not declare is deleted once no
// filter binds it. Live: `present` when the table was read; every action of
// every kind then, the filters' own ones too (refcnt == bindcnt).
struct ActionTable {
  bool present = false;
  std::vector<Action> actions;
  SourceLoc loc;
};

struct Qdisc {
  uint32_t parent = 0;
  uint32_t handle = 0;
  std::string kind;
  const KindOps* ops = nullptr;
  Options opts;
  Raw raw;
  SourceLoc loc;
};

struct Class {
  uint32_t parent = 0;
  uint32_t classid = 0;
  std::string kind;
  const KindOps* ops = nullptr;
  Options opts;
  Raw raw;
  SourceLoc loc;
};

// A filter's own police (Filter::police) and where the file declares it.
struct FilterPolice {
  Options opts;
  SourceLoc loc;
};

struct FilterKey {
  uint32_t parent = 0;
  uint32_t chain = 0;
  uint16_t pref = 0;
  uint16_t protocol = 0;  // host order ETH_P_*
  uint32_t handle = 0;
  auto operator<=>(const FilterKey&) const = default;
};

struct Filter {
  FilterKey key;
  std::string kind;
  const KindOps* ops = nullptr;
  Options opts;
  std::optional<uint32_t> classid;  // the kind's classid/flowid attribute
  std::vector<Action> actions;
  // The filter's own police (FilterOps::old_police_attr): the police action's
  // fields, read and checked by its table; absent: none (nearly every rule,
  // hence boxed). The kernel picks its index, and keeps either it or
  // `actions`, never both.
  Boxed<FilterPolice> police;
  std::string name;  // optional label from the file, for plans and errors
  Raw raw;
  SourceLoc loc;
  // Live filters: the handle as the kernel names it, when the model's key
  // differs (u32 rules of a root table: 800::5 in the kernel, ::5 here).
  // Replace and delete must send the kernel's own name.
  uint32_t wire_handle = 0;
  // Not a rule: a (parent, chain, pref, protocol) list of this kind that the
  // kernel holds with no rule in it (u32 keeps its root table there; `tc
  // filter add ... u32` with no options makes one, and u32 rules placed in
  // another pref's table leave their own pref's list empty). The file says
  // `empty: KIND`; handle 0, no options, classid or actions; sent without
  // TCA_OPTIONS, deleted as the whole list.
  bool empty_list = false;
  // A hash table entry (u32's 2:): the root table of the list it is in
  // (801:), where no other entry of the list shows it (a list that holds
  // only hash tables and their rules); 0: not said. Not wire_handle, which
  // is the entry's own kernel name (deletes and replaces send it): a root
  // belongs to the list, and the model has entries, not lists, so the
  // first table of such a list carries it (model/shared_tables.h).
  uint32_t list_root = 0;
  // tcsync's fingerprint of the rule (fingerprint.h), sent and read as the
  // first action's cookie; empty: none. Never a user cookie, never drift.
  // Last, so that the 4- and 1-byte members above share 8-byte slots.
  Opaque fingerprint;
};

// A filter chain created explicitly (tc chain add), optionally with a
// template: a classifier kind and its keys (flower: as masks) that every
// filter added to the chain must fit. The kernel also makes chains by
// itself, for the first filter in them; those are not objects here.
// Identity: (device, parent, index).
struct Chain {
  uint32_t parent = 0;  // as Filter::key.parent (a block's: the block index)
  uint32_t index = 0;
  // The template's protocol (flower: its eth_type key), host order. 0 is
  // tc's default for `tc chain add` (not ETH_P_ALL as for filters): tc then
  // sends eth_type 0, and only `protocol all` leaves the key out.
  uint16_t protocol = 0;
  std::string kind;  // the template's classifier; empty: no template
  const KindOps* ops = nullptr;
  Options opts;
  Raw raw;
  SourceLoc loc;
};

// One region of a device (or block) that a file owns (`own:`, scope.h):
//   tree:    the qdisc with handle `major` (major:0), its classes, the
//            qdiscs below them and so on down, and every filter attached
//            anywhere in that tree;
//   filters: the filters at `parent` (a block's region: any), in `chain`
//            (absent: every chain), with a pref in [pref_lo, pref_hi].
struct OwnRegion {
  bool tree = false;
  uint32_t major = 0;  // tree: the qdisc's handle (minor 0)
  uint32_t parent = 0;
  std::optional<uint32_t> chain;
  uint16_t pref_lo = 0, pref_hi = 0xFFFF;
  SourceLoc loc;
};

// A device, or a shared filter block (`blocks:` in the file; tc's `block N`):
// a block has filters only, addressed by TCM_IFINDEX_MAGIC_BLOCK and the
// block index; its filters' key.parent is that index (tcm_parent aliases
// tcm_block_index), never written in the file.
// Which sections of a device the file owns. A section the file lists is the
// whole truth: objects in it that the file does not name are deleted.
struct Device {
  std::string name;
  SourceLoc loc;
  std::vector<Qdisc> qdiscs;
  std::vector<Class> classes;
  std::vector<Filter> filters;
  std::vector<Chain> chains;
  // `atomic: true`: filter lists at the hooks change by one switch (atomic.h).
  bool atomic = false;
  // `own:` given: the file owns only these regions (scope.h); objects
  // outside them are foreign, never deleted or changed. Not given: the
  // whole device.
  bool scoped = false;
  std::vector<OwnRegion> own;
  SourceLoc own_loc;
  uint32_t block = 0;  // a shared block's index (name "block N"); 0: a network device
  // A copy of everything but the filters (apply's verify fills in those it
  // still needs). A member added above belongs in it too (model.cpp).
  Device without_filters() const;
};

struct State {
  std::vector<Device> devices;
  // Shared filter blocks (Device::block set): the file's, or the live ones
  // the dumped qdiscs bind.
  std::vector<Device> blocks;
  // Live only: for each block index, the devices whose qdiscs bind it (any
  // device, dumped or not): the kernel destroys a block, filters and all,
  // when its last qdisc goes.
  std::map<uint32_t, std::vector<std::string>> block_binders;
  Device* find_block(uint32_t index);
  const Device* find_block(uint32_t index) const;
  Device& get_or_add_block(uint32_t index);
  ActionTable actions;
  Device* find(const std::string& name);
  const Device* find(const std::string& name) const;
  Device& get_or_add(const std::string& name);
};

// Every place filters live in S (a State, const or not): its devices, then
// its shared blocks; and every filter of those, in that order.
template <class S, class Fn>
void for_each_place(S& s, Fn&& fn) {
  for (auto& d : s.devices) fn(d);
  for (auto& b : s.blocks) fn(b);
}
template <class S, class Fn>
void for_each_filter(S& s, Fn&& fn) {
  for_each_place(s, [&](auto& place) {
    for (auto& f : place.filters) fn(f);
  });
}

// Short human names used by plans and errors: "qdisc htb 1: root".
std::string describe(const Qdisc& q);
std::string describe(const Class& c);
std::string describe(const Filter& f, bool on_block = false);
// describe(f, on_block) appended to out: a plan prints one per rule.
void append_describe(std::string& out, const Filter& f, bool on_block = false);
std::string describe(const Chain& c, bool on_block = false);  // "chain 5 ingress (template flower)"
std::string describe(const Action& a);                        // "action mirred index 7"
std::string block_name(uint32_t index);                       // "block 22"
// The blocks a hook qdisc (clsact, ingress) binds: its ingress_block and
// egress_block, 0 when it has none.
std::pair<uint32_t, uint32_t> bound_blocks(const Qdisc& q);
// Every shared block a qdisc binds: its hook sides and its kind's
// block_fields (red's qevent blocks); none is 0.
std::vector<uint32_t> all_bound_blocks(const Qdisc& q);
std::string describe_filter_parent(uint32_t parent);
std::string format_filter_handle(const KindOps* ops, uint32_t h);
std::optional<uint32_t> parse_filter_handle(const KindOps* ops, std::string_view s);

}  // namespace tcsync
