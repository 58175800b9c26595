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
#include <utility>
#include <vector>

namespace tcsync {

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

}  // namespace tcsync
