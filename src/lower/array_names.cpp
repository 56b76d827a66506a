// The loop IR's array, extent and parameter names (see array_names.h).
#include "lower/array_names.h"

namespace sparseflow::lower {

std::string tensorPrefix(const std::string& tensor) {
  return "t" + tensor;
}
std::string valuesArray(const std::string& prefix) {
  return prefix + "_vals";
}
std::string posArray(const std::string& prefix, int32_t level) {
  return prefix + "_pos" + std::to_string(level);
}
std::string crdArray(const std::string& prefix, int32_t level) {
  return prefix + "_crd" + std::to_string(level);
}
std::string metaArray(const std::string& prefix, int32_t level) {
  return prefix + "_meta" + std::to_string(level);
}
std::string slotsArray(const std::string& prefix, int32_t level) {
  return prefix + "_slots" + std::to_string(level);
}
std::string valuesName(const std::string& tensor) {
  return valuesArray(tensorPrefix(tensor));
}
std::string extentName(const std::string& indexVar) {
  return "n_" + indexVar;
}
std::string paramName(const std::string& param) {
  return "p_" + param;
}
std::string workspacePrefix(int32_t nest) {
  return "ws" + std::to_string(nest);
}

}  // namespace sparseflow::lower
