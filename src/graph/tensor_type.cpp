// Element counts and the text of tensor types.
#include "graph/tensor_type.h"

#include "support/check.h"

namespace sparseflow::graph {

int64_t checkedNumel(const TensorType& type, const std::string& what) {
  SF_USER_CHECK(type.rank() <= 16) << what << ": rank " << type.rank() << " is above 16";
  int64_t n = 1;
  for (int64_t d : type.shape) {
    SF_USER_CHECK(d >= 0) << what << ": negative extent " << d << " in " << toString(type);
    SF_USER_CHECK(d <= kMaxElements && (d == 0 || n <= kMaxElements / d))
        << what << ": " << toString(type) << " has more than 2^50 elements";
    n *= d;
  }
  return n;
}

std::string toString(const TensorType& type) {
  std::string s = dtypeName(type.dtype);
  s += '[';
  for (size_t i = 0; i < type.shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(type.shape[i]);
  }
  s += ']';
  return s;
}

}  // namespace sparseflow::graph
