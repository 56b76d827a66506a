// README's 2:4 example: dense weights 32 x 64 (f32), a bias of 32, x a batch of 8.
sparseflow::Tensor weights = docs::denseTensor({32, 64});
std::vector<float> bias(32, 0.125f);
sparseflow::Tensor x = docs::denseTensor({8, 64});
// doc-test: after
docs::expect(y.shape() == std::vector<int64_t>{8, 32}, "y is 8 x 32");
