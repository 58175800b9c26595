// A qdisc's size table (tc-stab(8), TCA_STAB): how the qdisc counts a
// packet's size (link-layer overhead, ATM cells, a minimum), which every
// rate below it uses. sqm-scripts puts one on every HTB.
//
// The kernel keeps and reports the spec (TCA_STAB_BASE, struct
// tc_sizespec) and never the table (TCA_STAB_DATA), which it needs on every
// add: the table is a function of the spec, computed as tc computes it.
// In the model a size table stays a qdisc's raw TCA_STAB attribute (as the
// kernel reports it: the spec alone), so diff compares it byte for byte as
// before; the file and dump spell it `stab: {linklayer: atm, overhead: 34}`.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/diag.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

// `stab: {...}` -> the TCA_STAB attribute (header included) tc sends for
// the same words, without the table: the spec tc computes (tc_calc_size_table:
// cell_log for mtu and tsize, size_log so every entry fits 16 bits; no
// table for ethernet without mpu). With cell_log, size_log or cell_align
// given, the spec is taken as written (a state another tool made).
std::optional<std::vector<uint8_t>> parse_stab(const Node& n, Diagnostics& d);
// The YAML of a TCA_STAB attribute's payload; false (nothing written) when
// it is not a spec this reads (then it stays raw_attrs).
bool emit_stab(std::span<const uint8_t> payload, YamlOut& y);
// The same as one line, "{linklayer: atm, overhead: 34}", for plans.
std::optional<std::string> describe_stab(std::span<const uint8_t> payload);

// The table for a spec: entry i is the size on the wire of a packet of
// (i + 1) << cell_log bytes (ATM: 53-byte cells of 48; at least mpu),
// shifted right by size_log.
std::vector<uint16_t> stab_table(uint8_t cell_log, uint8_t size_log, uint32_t linklayer, uint32_t mpu, uint32_t tsize);

}  // namespace tcsync
