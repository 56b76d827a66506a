// README's conversion example: west0067.mtx in the block's directory.
// doc-test files: west0067.mtx=data/suitesparse/LAGraph/data/west0067.mtx
// doc-test: after
docs::expect(sparseflow::read("west0067.sft").shape() == a.shape(), "west0067.sft holds the matrix");
docs::expect(report.toString().size() > 0, "the conversion reports what it did");
