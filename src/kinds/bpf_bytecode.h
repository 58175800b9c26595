// Classic BPF programs as tc writes them: "N,code jt jf k,..." (decimal),
// the form `bytecode '...'` takes and bpf_asm -c / tcpdump -ddd print. The
// bpf action (act_bpf) and the bpf filter (cls_bpf) both carry one as a
// u16 count and the struct sock_filter array, and report it back as sent:
// kept as this text, compared exactly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/kind.h"
#include "model/tc_words.h"

namespace tcsync {

// The `bytecode` field's type: parse checks the form, emit prints it back.
extern const CustomType kBpfBytecodeType;

// Writes the program as LEN_ATTR (u16 count) then OPS_ATTR (the array);
// nothing for text that is not a program (the loader refused it).
void encode_bpf_bytecode(MsgWriter& w, const std::string& text, uint16_t len_attr, uint16_t ops_attr);
// The program a dump reports, as text; nullopt when neither attribute is
// there, a marker text when they do not agree (then never equal to a file).
std::optional<std::string> decode_bpf_bytecode(const Attr* len, const Attr* ops);

// tc's `bytecode 'N,...'`: the quoted program is one word.
bool tc_bpf_bytecode(TcCursor& c, const TcWord& kw, Node& body);
// tc's `bytecode-file PATH` (also `bcf`): the program read from the file
// at import, as tc reads it (lib/bpf_legacy.c: a line break is a comma,
// runs of blanks one blank), so the file it writes holds the program.
bool tc_bpf_bytecode_file(TcCursor& c, const TcWord& kw, Node& body);

}  // namespace tcsync
