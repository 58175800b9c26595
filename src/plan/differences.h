// How two objects of one kind differ, as "key a -> b" texts: the differ's
// comparison (differ.h), which the action table and the applier's verify
// use too.
#pragma once
#include <string>
#include <vector>

#include "model/kind.h"
#include "model/model.h"

namespace tcsync {

// The differences between two option sets of one kind, as "key a -> b" texts.
// `recreate` is set when a changed field cannot change in place.
std::vector<std::string> diff_options(const KindOps& ops, const Options& want, const Options& have, bool& recreate);
// Appends how two objects' unread kernel attributes (model.h Raw) differ.
void diff_raw(const Raw& want, const Raw& have, std::vector<std::string>& why);

// The differ's comparison of one object with the live one it was matched to
// (qdiscs by parent, classes by classid, filters by key, actions by place):
// what differs, as "key a -> b" texts, empty when nothing does. `recreate`
// is set when the difference cannot change in place (the class: set
// *by_options when the kind's options_need_recreate said so). The applier
// verifies what the kernel echoed with these too.
std::vector<std::string> qdisc_differences(const Qdisc& want, const Qdisc& have, bool& recreate);
std::vector<std::string> class_differences(const Class& want, const Class& have, bool& recreate,
                                           bool* by_options = nullptr);
std::vector<std::string> filter_differences(const Filter& want, const Filter& have, bool& recreate);
std::vector<std::string> action_differences(const Action& want, const Action& have);
// The differences as one reason: "a -> b, c -> d".
std::string join_differences(const std::vector<std::string>& why);

}  // namespace tcsync
