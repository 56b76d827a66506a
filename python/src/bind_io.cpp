// Files and conversions: read, write, checkpoints (.safetensors), convert (with its report),
// transpose.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"

namespace sparseflow::python {
namespace {

FileKind fileKindOf(const std::string& name) {
  if (name.empty() || name == "auto") return FileKind::kAuto;
  for (int32_t k = 1; k <= static_cast<int32_t>(FileKind::kSafetensors); ++k) {
    if (name == fileKindName(static_cast<FileKind>(k))) return static_cast<FileKind>(k);
  }
  throw Error(ErrorCode::kInvalidArgument,
              "unknown file kind '" + name +
                  "' (auto, matrix-market, harwell-boeing, frostt, dlmc, npy, sft, triplet, "
                  "safetensors)");
}

py::dict entryDict(const CheckpointEntry& e) {
  py::dict out;
  out["name"] = e.name;
  out["shape"] = py::tuple(py::cast(e.shape));
  out["dtype"] = e.dtype;
  out["format"] = e.format;
  out["arrays"] = e.arrays;
  out["bytes"] = e.bytes;
  out["readable"] = e.readable();
  return out;
}

void bindCheckpoint(py::module_& m) {
  py::class_<Checkpoint>(m, "_Checkpoint", "A .safetensors file opened for reading (mapped).")
      .def_static(
          "open",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return Checkpoint::open(path);
          },
          py::arg("path"))
      .def_property_readonly("path", &Checkpoint::path)
      .def("names",
           [](const Checkpoint& c) {
             std::vector<std::string> names;
             for (const auto& e : c.entries()) names.push_back(e.name);
             return names;
           })
      .def(
          "entry",
          [](const Checkpoint& c, const std::string& name) { return entryDict(c.entry(name)); },
          py::arg("name"))
      .def("contains", &Checkpoint::contains, py::arg("name"))
      .def_property_readonly("metadata", &Checkpoint::metadata)
      .def(
          "tensor",
          [](const Checkpoint& c, const std::string& name) {
            py::gil_scoped_release release;
            return c.tensor(name);
          },
          py::arg("name"), "The tensor in its stored format and dtype, with arrays of its own.");

  py::class_<CheckpointWriter>(m, "_CheckpointWriter", "Collects named tensors for one file.")
      .def(py::init<>())
      .def("add", &CheckpointWriter::add, py::arg("name"), py::arg("tensor"))
      .def("copy", &CheckpointWriter::copy, py::arg("source"), py::arg("name"))
      .def("set_metadata", &CheckpointWriter::setMetadata, py::arg("key"), py::arg("value"))
      .def("names", &CheckpointWriter::names)
      .def(
          "write",
          [](const CheckpointWriter& w, const std::string& path) {
            py::gil_scoped_release release;
            w.write(path);
          },
          py::arg("path"), "Writes the file atomically.");
}

py::dict reportDict(const ConversionReport& r) {
  py::dict out;
  out["from"] = r.from;
  out["to"] = r.to;
  out["path"] = r.path;
  out["stored_before"] = r.storedBefore;
  out["stored_after"] = r.storedAfter;
  out["bytes_before"] = r.bytesBefore;
  out["bytes_after"] = r.bytesAfter;
  out["seconds"] = r.seconds;
  out["text"] = r.toString();
  return out;
}

}  // namespace

void bindIo(py::module_& m) {
  bindCheckpoint(m);
  m.def(
      "_read",
      [](const std::string& path, const std::string& format, const std::string& dtype,
         const std::string& kind, bool verifyChecksum, const std::string& tensor) {
        ReadOptions options;
        options.format = format;
        if (!dtype.empty()) options.dtype = parseDType(dtype);  // "": exactly as the file holds
        options.kind = fileKindOf(kind);
        options.verifyChecksum = verifyChecksum;
        options.tensor = tensor;
        py::gil_scoped_release release;
        return read(path, options);
      },
      py::arg("path"), py::arg("format") = "", py::arg("dtype") = "", py::arg("kind") = "auto",
      py::arg("verify_checksum") = true, py::arg("tensor") = "");
  m.def(
      "_write",
      [](const std::string& path, const Tensor& tensor, const std::string& kind,
         const std::string& name) {
        WriteOptions options;
        options.kind = fileKindOf(kind);
        if (!name.empty()) options.tensor = name;
        py::gil_scoped_release release;
        write(path, tensor, options);
      },
      py::arg("path"), py::arg("tensor"), py::arg("kind") = "auto", py::arg("name") = "");
  m.def(
      "_convert",
      [](const Tensor& tensor, const std::string& format, const std::string& dtype,
         bool forceGeneral) {
        ConvertOptions options;
        options.changeDType = !dtype.empty();
        if (options.changeDType) options.dtype = parseDType(dtype);
        options.forceGeneral = forceGeneral;
        const Format target = Format::parse(format, tensor.rank());
        ConversionReport report;
        Tensor out;
        {
          py::gil_scoped_release release;
          out = convert(tensor, target, options, &report);
        }
        return py::make_tuple(std::move(out), reportDict(report));
      },
      py::arg("tensor"), py::arg("format"), py::arg("dtype") = "",
      py::arg("force_general") = false);
  m.def(
      "_transpose",
      [](const Tensor& tensor, const std::string& format) {
        const Format target = Format::parse(format, tensor.rank());
        py::gil_scoped_release release;
        return transpose(tensor, target);
      },
      py::arg("tensor"), py::arg("format"));
}

}  // namespace sparseflow::python
