// The epilogue registry's user side: names, parsing and float64 references, from activation_list.h.
#include "sparseflow/epilogue.h"

#include "kernels/activation_list.h"
#include "kernels/activation_reference.h"
#include "support/check.h"

namespace sparseflow {
namespace {

struct ActivationEntry {
  Activation activation;
  const char* name;
  double (*reference)(double);
};

const std::vector<ActivationEntry>& registry() {
#define SF_ACTIVATION_ENTRY(e, name, ref, vec) {Activation::e, name, &kernels::ref},
  static const std::vector<ActivationEntry> entries = {SF_ACTIVATION_LIST(SF_ACTIVATION_ENTRY)};
#undef SF_ACTIVATION_ENTRY
  return entries;
}

const ActivationEntry& entry(Activation activation) {
  for (const ActivationEntry& e : registry()) {
    if (e.activation == activation) return e;
  }
  SF_FAIL(kInvalidArgument) << "unknown activation value " << static_cast<int32_t>(activation);
}

std::string knownNames() {
  std::string names = "none, bias, gelu";
  for (const ActivationEntry& e : registry()) {
    if (e.activation == Activation::kNone) continue;
    names += ", " + std::string(e.name) + ", bias+" + e.name;
  }
  return names;
}

}  // namespace

const std::vector<Activation>& allActivations() {
  static const std::vector<Activation> all = [] {
    std::vector<Activation> out;
    for (const ActivationEntry& e : registry()) out.push_back(e.activation);
    return out;
  }();
  return all;
}

const char* activationName(Activation activation) {
  return entry(activation).name;
}

double activationReference(Activation activation, double x) {
  return entry(activation).reference(x);
}

Epilogue Epilogue::parse(std::string_view text) {
  Epilogue epilogue;
  std::string_view rest = text;
  if (rest == "bias") {
    epilogue.bias = true;
    return epilogue;
  }
  if (rest.starts_with("bias+")) {
    epilogue.bias = true;
    rest.remove_prefix(5);
  }
  if (rest == "gelu") rest = "gelu_erf";  // PyTorch's default GELU is the erf form.
  for (const ActivationEntry& e : registry()) {
    if (rest == e.name && !(epilogue.bias && e.activation == Activation::kNone)) {
      epilogue.activation = e.activation;
      return epilogue;
    }
  }
  SF_FAIL(kInvalidArgument) << "epilogue '" << text << "' is not known (known: " << knownNames()
                            << ")";
}

std::string Epilogue::toString() const {
  if (activation == Activation::kNone) return bias ? "bias" : "none";
  return (bias ? std::string("bias+") : std::string()) + activationName(activation);
}

std::vector<Epilogue> Epilogue::all() {
  std::vector<Epilogue> out;
  for (bool bias : {false, true}) {
    for (Activation a : allActivations()) out.push_back(Epilogue{bias, a});
  }
  return out;
}

}  // namespace sparseflow
