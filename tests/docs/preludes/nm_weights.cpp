// docs/nm.md's example: w dense 16 x 32 (f32).
sparseflow::Tensor w = docs::denseTensor({16, 32});
// doc-test: after
docs::expect(back.shape() == w.shape(), "decompress gives the matrix back");
