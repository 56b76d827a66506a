// Which sparse inputs drive loops, which are read as dense, and which are read through a copy in
// another level order, decided once per kernel before any nest is built (see docs/compiler.md,
// "Drivers" and "Co-iteration").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "lower/normalize.h"
#include "sparseflow/format.h"

namespace sparseflow::lower {

struct DriverPlan {
  /// The format each input is read in: its bound format, dense, or a concordant copy.
  std::map<std::string, Format> formats;
  std::map<std::string, bool> densified;
  std::vector<std::string> notes;  ///< one line per decision a user should see
};

/// Plans the drivers of every pass. A sparse input keeps driving its loops when the body is zero
/// wherever no driver of a loop has an entry (so that loop may skip those points); several drivers
/// of one index are co-iterated (their levels must be compressed with ordered unique coordinates).
/// Otherwise the input is read as dense: under a max reduction, where a zero of it does not make
/// its term zero (`exp(A)`, `A + D` with D dense), or where its level cannot be co-iterated.
/// A driver whose level order contradicts an earlier driver's is read through a copy in that order
/// (csc as csr), never refused.
/// `levelOrders` (sparse_reorder) first puts inputs' levels in the given index orders;
/// `fused` (sparse_fuse) reads inputs as coordinates (coo) in the given orders.
DriverPlan planDrivers(const expr::CheckedKernel& kernel, const Normalized& normalized,
                       const std::map<std::string, Format>& bound,
                       const std::map<std::string, std::vector<std::string>>& levelOrders = {},
                       const std::map<std::string, std::vector<std::string>>& fused = {});

}  // namespace sparseflow::lower
