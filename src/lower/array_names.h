// The names of the arrays, extents and parameters in the loop IR and the generated code, made in
// one place: a tensor A's arrays are tA_vals, tA_pos1, tA_crd1, tA_meta1, tA_slots1; an index i's
// extent is n_i; a parameter alpha is p_alpha; nest n's assembly workspace is wsN_vals/_mark/_list.
#pragma once

#include <cstdint>
#include <string>

namespace sparseflow::lower {

/// The prefix of a tensor's arrays ("tA").
std::string tensorPrefix(const std::string& tensor);
/// A tensor's arrays from its prefix: values, and level l's pos, crd, n:m metadata and fixed(k)
/// slot count.
std::string valuesArray(const std::string& prefix);
std::string posArray(const std::string& prefix, int32_t level);
std::string crdArray(const std::string& prefix, int32_t level);
std::string metaArray(const std::string& prefix, int32_t level);
std::string slotsArray(const std::string& prefix, int32_t level);
/// The values array of a tensor by name ("tA_vals").
std::string valuesName(const std::string& tensor);
/// An index variable's extent ("n_i") and a scalar parameter ("p_alpha").
std::string extentName(const std::string& indexVar);
std::string paramName(const std::string& param);
/// The prefix of nest n's assembly workspace arrays ("ws0": ws0_vals, ws0_mark, ws0_list).
std::string workspacePrefix(int32_t nest);

}  // namespace sparseflow::lower
