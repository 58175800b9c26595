// u32's root tables as a batch of tc lines numbers them, for import
// (model/tc_tables.h): u32.cpp's TcWords::tables.
#pragma once
#include <memory>

#include "model/tc_tables.h"

namespace tcsync {

std::unique_ptr<TcTables> make_u32_tc_tables();

}  // namespace tcsync
