// Where a shared hash table lives, decided once for dump and loader alike.
//
// u32 keeps its hash tables in one space per qdisc (the kernel's
// tc_u_common: a clsact's ingress and egress, an htb qdisc and its classes,
// every chain), and a table belongs to a pref, not to the list that made
// it: u32_walk lists every table whose prio is the list's pref, so each
// list at a pref shows every table of that pref. A list's own root table
// (800:, 801:...) is the kernel's to tell (the dumper asks). Any other
// table (`divisor`) is equally reachable from every list of its pref; the
// file must still put it in one, and dump and loader must pick the same
// one, or every apply would move it. The rule: the first list, in
// (parent, chain, protocol) order, whose rules reach it by `link` (through
// tables already placed); a table nothing links to goes to the first list.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace tcsync {

struct Filter;
struct KindOps;

// The qdisc whose table space a list at `parent` uses: a clsact's (or
// ingress's) sides and its `ffff:` are one qdisc; else the parent's major.
// Lists share tables when they have this and the pref in common.
uint32_t table_space_of(uint32_t parent);

// roots[i]: list i's root table (lists in the order above); links: (table a
// rule hangs in, table it links to). Returns the list index of every table
// named in roots, links or `tables`.
std::map<uint32_t, size_t> place_tables(const std::vector<uint32_t>& roots,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& links,
                                        const std::vector<uint32_t>& tables);

// Root table ids. The kernel (6.1 u32_init) gives the first list of a table
// space 800: and every further one the next of a cyclic counter, 801:,
// 802:..., in creation order; a freed id is never handed out again while the
// space lives, and the space (tc_u_common) goes only with its last list. So
// the ids are state: a script that made its lists in another order than
// tcsync does has other ids, and `ht 800:` in a later tc command reaches
// another list. A list's root shows in the handle of a rule in it (801::5)
// or, for an empty list, as the list's own (801:); Filter::wire_handle
// carries it both in live state and as the file declares it. A list that
// holds only hash tables and their rules shows none in its entries: the
// dumper asks for it, and the first table entry carries it as
// Filter::list_root (the file's `root_table: "801:"` on that entry).

// Hash tables a file or script gives ids of 800: and above (`handle 900:
// u32 divisor 1`: the kernel takes any free id) are the same kind of entry
// as the roots, differing only by id, and their rules (900::1) look like a
// root table's rules (801::5). Loader and dumper both first read such a
// rule as its list's root's (wire_handle 900::1, key ::1), then, once the
// tables are known (declared in the file; in a dump, the ids that a get of
// each list's root does not answer), hand every rule of a table `fs` holds
// in its table space back to that table (key 900::1, `ht` 900:, by the
// kind's normalize).
void home_explicit_table_rules(std::vector<Filter>& fs);

// Whether `f` is a hash table of a kind with shared tables (u32's 2:, a
// root's 800:, a file's 900:), not a rule: its handle names a table alone.
bool is_table_entry(const Filter& f);

// The root table of the list `f` is in as `f` shows it, 0 when it shows
// none (or is not of a kind with kernel-numbered roots).
uint32_t kernel_root_of(const Filter& f);

// Whether `h` names a table the kernel numbers as a list's root (800: to
// fff:) in a kind whose lists have such roots; false for any other kind.
bool names_root_table(const KindOps* ops, uint32_t h);

// One list of a table space, with the root its entries show (0: none),
// and their kind, whose notation the root is written in.
struct RootList {
  uint32_t parent, chain;
  uint16_t pref, protocol;
  uint32_t root;
  const KindOps* ops = nullptr;
  auto operator<=>(const RootList& o) const {
    return std::tie(parent, chain, pref, protocol) <=> std::tie(o.parent, o.chain, o.pref, o.protocol);
  }
  bool operator==(const RootList& o) const { return (*this <=> o) == 0; }
};

// The lists of kinds with kernel-numbered roots in `fs`, by table space,
// each space's in the order tcsync creates them on a fresh qdisc: by
// (parent, chain, pref), ties in the order of `fs`.
std::map<uint32_t, std::vector<RootList>> root_lists(const std::vector<Filter>& fs);

// Table spaces whose shown roots are not 800:, 801:... in that order: a
// dump writes their roots, or applying it would renumber them.
std::set<uint32_t> moved_root_spaces(const std::vector<Filter>& fs);

// The order to create one space's lists in (indexes into `ls`) so that each
// declared root comes out as declared: a list declaring 80N: goes N-th,
// the others fill the free places in their order. Empty when no list
// declares a root; `unreachable` gets the indexes of lists whose declared
// root no order gives (past the last list, or declared twice).
std::vector<size_t> root_order(const std::vector<RootList>& ls, std::vector<size_t>& unreachable);

}  // namespace tcsync
