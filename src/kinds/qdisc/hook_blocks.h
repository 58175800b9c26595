// The hooks for filters, clsact and ingress: what both read and write.
// Shared filter blocks: a hook may take its filters from block N (tc's
// `ingress_block N`), which every qdisc naming N shares. tc sends the index as
// TCA_INGRESS_BLOCK/TCA_EGRESS_BLOCK beside TCA_KIND, not inside TCA_OPTIONS,
// and the kernel reads them only when the qdisc is created: a change or
// replace with another index returns 0 and changes nothing (6.18), hence
// kRecreate.
#pragma once
#include <cstdint>
#include <span>

#include "model/kind.h"

namespace tcsync {

// The fields' rows in clsact's table; ingress's is its first row alone.
enum : uint16_t { kIngressBlock, kEgressBlock };
extern const Field kHookBlockFields[2];

void hook_encode(const Options& o, const KindCtx& ctx, MsgWriter& w);
void hook_decode(std::span<const uint8_t> attrs, const KindCtx& ctx, Options& o);
// ingress: no egress block (see hook_blocks.cpp).
void ingress_decode(std::span<const uint8_t> attrs, const KindCtx& ctx, Options& o);
void hook_normalize(Options& o, const KindCtx& ctx, Diagnostics& d, SourceLoc loc);

}  // namespace tcsync
