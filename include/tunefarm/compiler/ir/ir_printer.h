// Readable text for IR nodes and PrimFuncs, for logs, tests and `tunefarm show`.
#pragma once

#include <iosfwd>
#include <string>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

std::string ToString(const Expr& e);
std::string ToString(const Stmt& s);
std::string ToString(const PrimFunc& f);

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tunefarm::ir
