// docs/capi.md's layer example: W 8 x 16 (f32), a bias, x a batch of 2; y must be written.
const int64_t out = 8, in = 16, batch = 2;
const int64_t shape[2] = {8, 16};
float weights[8 * 16], bias[8], x[2 * 16], y[2 * 8];
for (int k = 0; k < 8 * 16; ++k) weights[k] = (float)((k * 7) % 11) - 5.0f;
for (int k = 0; k < 8; ++k) bias[k] = 0.5f;
for (int k = 0; k < 2 * 16; ++k) x[k] = (float)(k % 5) * 0.25f;
for (int k = 0; k < 2 * 8; ++k) y[k] = -12345.0f;
// doc-test: after
for (int k = 0; k < 2 * 8; ++k) {
  if (y[k] == -12345.0f) {
    fprintf(stderr, "y[%d] was not written: %s\n", k, sparseflow_last_error());
    return 1;
  }
}
