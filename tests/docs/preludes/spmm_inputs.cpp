// README's kernel example: a = west0067 (67 x 67, csr), b dense 67 x 16, bias 16 values.
// doc-test files: west0067.mtx=data/suitesparse/LAGraph/data/west0067.mtx
sparseflow::Tensor a = sparseflow::read("west0067.mtx");
sparseflow::Tensor b = docs::denseTensor({67, 16});
sparseflow::Tensor bias = docs::denseTensor({16});
// doc-test: after
docs::expect(c.shape() == std::vector<int64_t>{67, 16}, "C is 67 x 16");
