// Extended matches (ematch trees, tc-ematch(8)) as cls_basic carries them in
// TCA_BASIC_EMATCHES. The YAML form is tc's own expression grammar, parsed
// here, never by running tc:
//
//   cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not meta(nf_mark eq 5)
//
// A value is kept as its canonical text (what `canonical` and `decode_tree`
// print), so the file and the kernel compare as strings: the loader turns
// whatever the user wrote into the canonical text, and the encoder parses
// that text again. Matches tcsync does not model (text, ipset...) and
// bytes it would not re-create exactly are kept raw, `ematch(KIND HEX)`, so a
// dump loses nothing and a round trip sends the kernel's bytes back.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/kind.h"
#include "model/tc_words.h"
#include "netlink/wire.h"

namespace tcsync::ematch {

// Where in the text a parse failed, and why.
struct ParseError {
  size_t offset = 0;
  std::string message;
};

// Nesting bound: the kernel evaluates with a stack of CONFIG_NET_EMATCH_STACK
// (32) containers; deeper trees are refused here rather than failing at match
// time.
constexpr int kMaxDepth = 32;

// The canonical text of an expression, or the error.
std::optional<std::string> canonical(std::string_view text, ParseError& err);

// Writes TCA_EMATCH_TREE_HDR and TCA_EMATCH_TREE_LIST (the body of
// TCA_BASIC_EMATCHES) exactly as tc does: matches numbered in tc's order (a
// sequence, then each container's sequence depth first). False on a parse
// error (the text should be canonical already).
bool encode_tree(std::string_view text, MsgWriter& w, ParseError& err);

// The ematch kinds (TCF_EM_CMP, ...) a tree's text uses, each once, in
// the order tc numbers the matches, containers left out: what the kind probe asks the kernel
// for (a missing em_* module is refused before anything is sent). Empty
// for text that does not parse.
std::vector<uint16_t> match_kinds(std::string_view text);

// Reads the body of TCA_BASIC_EMATCHES back into canonical text. Survives any
// bytes; a tree it cannot follow (no header, a reference backwards, too deep)
// gives nullopt.
std::optional<std::string> decode_tree(std::span<const uint8_t> payload);

// The `match` field of the filters that carry an ematch tree (basic,
// cgroup, flow): a Custom type whose value is the canonical text, written
// and read as the tree's nest (its put and get), and tc's `match EXPR`
// words for import (up to the filter's classid, flowid, action or police).
extern const CustomType kMatchType;
bool tc_match(TcCursor& c, const TcWord& kw, Node& body);

}  // namespace tcsync::ematch
