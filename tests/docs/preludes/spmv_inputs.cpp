// docs/compiler.md's example: A = west0067 (67 x 67, csr), x dense 67.
// doc-test files: west0067.mtx=data/suitesparse/LAGraph/data/west0067.mtx
sparseflow::Tensor A = sparseflow::read("west0067.mtx");
sparseflow::Tensor x = docs::denseTensor({67});
// doc-test: after
docs::expect(y.shape() == std::vector<int64_t>{67}, "y has 67 values");
