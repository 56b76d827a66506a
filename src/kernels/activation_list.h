// The activation registry, one line per activation: X(enumerator, name, reference, vector functor).
// `reference` is a double(double) function in activation_reference.h (the formula of the kernel
// language's function of the same name, support/elementwise_functions.h); `vector functor` is a
// struct in activations-inl.h applied per SIMD vector. Adding an activation is one line here plus
// those two functions; every kernel, test and benchmark picks it up from this list, and kernels
// written `relu(...)` etc. reach it (pipeline/contraction.cpp matches the names).
#pragma once

#define SF_ACTIVATION_LIST(X)                               \
  X(kNone, "none", referenceIdentity, VecIdentity)          \
  X(kRelu, "relu", referenceRelu, VecRelu)                  \
  X(kSilu, "silu", referenceSilu, VecSilu)                  \
  X(kGeluErf, "gelu_erf", referenceGeluErf, VecGeluErf)     \
  X(kGeluTanh, "gelu_tanh", referenceGeluTanh, VecGeluTanh) \
  X(kTanh, "tanh", referenceTanh, VecTanh)                  \
  X(kSigmoid, "sigmoid", referenceSigmoid, VecSigmoid)
