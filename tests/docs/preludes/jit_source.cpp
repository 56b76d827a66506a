// docs/jit.md's example: `source` defines sf_spmm (here y = 2x, to check the call).
const std::string source = R"(#include <stdint.h>
extern "C" int sf_spmm(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2 * x[i];
  return 0;
})";
// doc-test: after
const float in[3] = {1, 2, 3};
float out[3] = {0, 0, 0};
docs::expect(spmm(3, in, out) == 0 && out[2] == 6.0f, "the loaded function runs");
