// Model <-> rtnetlink tc messages. The generic parts (tcmsg, TCA_KIND,
// TCA_CHAIN, the action list) live here; each kind's options are written and
// read by its table's hooks. Pure: golden tests compare the bytes.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "base/diag.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"

namespace tcsync {

enum class Op : uint8_t { Add, Replace, Change, Delete };
const char* op_name(Op op);

// Each call appends one complete message (seq 0: the sender numbers them)
// and returns its offset in the buffer. Errors (a device in a mirred action
// that does not exist) go to diags, located at the offending YAML line.
// `part`: one of the kind's follow-up messages (QdiscOps::follow_ups), a
// change that carries only what the kind writes for it; 0: the qdisc's own.
size_t encode_qdisc(MsgWriter& w, Op op, const Qdisc& q, uint32_t ifindex, const LinkNames* links, Diagnostics& d,
                    uint16_t part = 0);
size_t encode_class(MsgWriter& w, Op op, const Class& c, uint32_t ifindex, const LinkNames* links, Diagnostics& d);
// `live` (for replace/delete) supplies the handle the kernel knows the rule by.
// `programs` supplies the file descriptors of bpf filters' programs.
size_t encode_filter(MsgWriter& w, Op op, const Filter& f, uint32_t ifindex, const LinkNames* links, Diagnostics& d,
                     const Filter* live = nullptr, const BpfPrograms* programs = nullptr);
// Deletes every filter of one (parent, chain, pref, protocol) at once.
size_t encode_filter_group_delete(MsgWriter& w, const FilterKey& k, std::string_view kind, uint32_t ifindex);
// RTM_GETTFILTER of one filter (not a dump), by the kernel's handle.
size_t encode_filter_get(MsgWriter& w, const FilterKey& k, std::string_view kind, uint32_t ifindex, uint32_t handle);

// RTM_NEWCHAIN / RTM_DELCHAIN, as `tc chain add|del dev D PARENT chain N
// [protocol P] [KIND KEYS]`: TCA_CHAIN always, then the template's TCA_KIND
// and TCA_OPTIONS. A delete flushes the chain's filters.
size_t encode_chain(MsgWriter& w, Op op, const Chain& c, uint32_t ifindex, const LinkNames* links, Diagnostics& d);
// The action table (tc actions ...): add (create, or fail if the index is
// taken), replace (change in place, by index) and delete (by kind and index).
size_t encode_action(MsgWriter& w, Op op, const Action& a, const LinkNames* links, Diagnostics& d);
// RTM_GETACTION of one kind's table, many actions a message. terse
// (TCA_ACT_FLAG_TERSE_DUMP): each action's kind, index, cookie and counters
// only, about half the bytes, so half the chunks (the kernel walks the
// table from its start for every chunk).
size_t encode_action_dump_request(MsgWriter& w, std::string_view kind, bool terse = false);

// Dump requests (NLM_F_DUMP) for one device (ifindex 0: all devices).
// terse (filters): TCA_DUMP_FLAGS_TERSE, handles and action cookies only.
size_t encode_dump_request(MsgWriter& w, uint16_t rtm_type, uint32_t ifindex, uint32_t parent = 0, bool terse = false);

// Decoding one message of a dump (or a notification). Returns false for
// messages that are not objects to model (the filter chain's "head" entry,
// u32's implicit root hash table, default qdiscs with handle 0).
struct Decoded {
  uint32_t ifindex = 0;
  // decode_filter: the message was the head of a (pref, protocol) list, no
  // rule; `out` holds it as an empty list (Filter::empty_list).
  bool list_head = false;
};
bool decode_qdisc(std::span<const uint8_t> msg, const LinkNames* links, Qdisc& out, Decoded& info);
bool decode_class(std::span<const uint8_t> msg, const LinkNames* links, Class& out, Decoded& info);
bool decode_filter(std::span<const uint8_t> msg, const LinkNames* links, Filter& out, Decoded& info);
bool decode_chain(std::span<const uint8_t> msg, const LinkNames* links, Chain& out, Decoded& info);
// One RTM_NEWACTION message of a table dump: its actions appended to `out`.
bool decode_action_msg(std::span<const uint8_t> msg, const LinkNames* links, std::vector<Action>& out);
// The same for a terse dump: the indexes of its actions, appended to `out`.
bool decode_action_indexes(std::span<const uint8_t> msg, std::vector<uint32_t>& out);

}  // namespace tcsync
