// replaceOutput (see executable.h).
#include "pipeline/executable.h"

#include "support/check.h"

namespace sparseflow::pipeline {

void replaceOutput(Tensor& output, Tensor result, const Format& made, const std::string& name) {
  SF_USER_CHECK(output.shape() == result.shape())
      << "output '" << name << "' has the wrong shape for these inputs";
  // ell / hyb choose their width from the data: any width of that format is the same output.
  const bool sameFormat =
      output.format() == made || output.format() == result.format() ||
      (made.needsData() && output.format().toString().rfind(made.toString() + ":", 0) == 0);
  SF_USER_CHECK(sameFormat) << "output '" << name << "' is " << output.format().toString()
                            << "; the kernel makes " << made.toString();
  output = std::move(result);
}

}  // namespace sparseflow::pipeline
