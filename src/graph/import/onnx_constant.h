// A tensor whose value the ONNX importer knows while importing: an initializer, a Constant node or
// the result of folding an operator over such tensors (shape arithmetic, masks, embeddings of
// constant positions). Integer and boolean tensors keep exact int64 values; floating ones double.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace sparseflow::graph::onnx_import {

struct Constant {
  std::vector<int64_t> shape;
  bool integral = false;      ///< int or bool elements (in `ints`); else floating (in `reals`)
  std::vector<int64_t> ints;  ///< when integral
  std::vector<double> reals;  ///< when floating

  int64_t numel() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  double real(int64_t i) const;
  /// Element i as an integer (floating values must be whole numbers: kInvalidArgument otherwise).
  int64_t integer(int64_t i, const std::string& what) const;
  /// All elements as integers (shape arguments: Reshape's shape, Slice's starts...).
  std::vector<int64_t> integers(const std::string& what) const;
  /// Makes a floating copy (integral values as doubles).
  Constant asReal() const;

  static Constant realScalar(double v);
  static Constant intVector(const std::vector<int64_t>& values);
};

/// The value of a TensorProto. `where` names the tensor in messages ("model.onnx: initializer
/// \"w\""); external data is read from `baseDir` (the model's folder), never from outside it.
Constant readTensorProto(const onnx::TensorProto& tensor, const std::string& where,
                         const std::string& baseDir);

/// Row-major strides of a shape.
std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape);

}  // namespace sparseflow::graph::onnx_import
