"""prune(model, calibration_inputs): one-shot pruning of nn.Linear weights, calibrated on inputs.

    report = sf.prune(model, batches, pattern="2:4", method="sparsegpt")
    print(report)            # per layer: sparsity, n:m, error of its outputs; the model's outputs
    sf.sparsify(model)       # the pruned 2:4 weights go into SparseLinear unchanged

Three methods, each pruning every chosen layer's weight W (out x in) to a sparsity:

- ``magnitude``: drop the smallest |W_ij| (per layer; for n:m, per group of m along a row, ties
  to the lower column as sf.nm.prune). No calibration is used to choose; the baseline.
- ``wanda`` (Sun et al. 2023, "A Simple and Effective Pruning Approach for Large Language
  Models"): score |W_ij| * ||X_j||_2, with X_j input feature j over all calibration tokens;
  drop the lowest scores of each output row (for n:m, the m-n lowest of each group of m).
  No weight update.
- ``sparsegpt`` (Frantar and Alistarh 2023, "SparseGPT: Massive Language Models Can Be
  Accurately Pruned in One-Shot"): with H = X^T X / tokens + lambda I (lambda = damp x its mean
  diagonal), the upper Cholesky factor U of H^-1 is walked column by column in blocks of
  ``block_size``; the mask of a block is chosen by w^2 / U_jj^2 (lowest first, over the whole
  block; for n:m, per row at every m-th column, on the weights as updated so far), each pruned
  weight's error is spread over the row's later columns (the OBS update), and the block's
  accumulated error over the columns after it. Each call's X^T X is computed in float32 and
  summed in float64; the Cholesky factors, scores and updates are float64 (the factor of a
  damped, often ill-conditioned H loses digits in float32), and the result is rounded to the
  weight's dtype once. An input feature that is zero on every calibration token gets
  H_jj = lambda, so its weights score lowest and go first (the paper's code zeroes them all).

Every method runs sequentially, as the papers' reference code does block by block: the layers
are taken in the order the model first calls them, and the inputs of each group of layers are
recaptured from the model with all earlier layers already pruned (a group is the layers called
one after another on the same input tensor, such as an attention's query, key and value, which
share those statistics anyway). A forward pass stops as soon as the group's layers have seen their
inputs, so later groups cost more than earlier ones but nothing runs twice. ``sequential=False``
captures every layer's inputs from the dense model in one pass instead.

calibration_inputs is a list of model calls: a tensor calls ``model(t)``, a tuple or list
``model(*args)``, a dict (such as a Hugging Face tokenizer's output) ``model(**kwargs)``. When a
call has a 2-D ``attention_mask``, the rows of a layer's input whose leading (batch, sequence)
shape is the mask's are kept only where the mask is nonzero: padding tokens do not calibrate.

The model is pruned in place (the weights' storage is written, so every reference to a layer
sees the pruned weights), in eval mode and without gradients; its training flags are restored.
The returned PruneReport lists every nn.Linear, pruned or skipped with the reason, and the change
of the model's outputs on the calibration inputs.
"""

from __future__ import annotations

import fnmatch
import math
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from ._ext import _C
from .errors import InvalidArgument, SparseFlowError
from .layer_reports import LayerList

METHODS = ("sparsegpt", "wanda", "magnitude")


@dataclass
class PrunedLayer:
    """One nn.Linear that prune saw: pruned, or skipped with the reason.

    sparsity: the fraction of its weights that are zero afterwards. nm: whether the weight passes
    sparseflow's n:m check (sf.nm.is_nm) for the pattern; None without a pattern.
    relative_error: ||X W^T - X W'^T||_F / ||X W^T||_F over the calibration tokens X this layer saw
    when it was pruned (bias excluded; W before, W' after). tokens: the rows of X. seconds: the
    time choosing the mask and updating the weights took (capturing X not included)."""

    name: str
    shape: tuple  # (out_features, in_features)
    pruned: bool
    reason: str = ""  # why it was skipped; "" when pruned
    sparsity: float = 0.0
    nm: bool | None = None
    relative_error: float | None = None
    tokens: int = 0
    seconds: float = 0.0


class PruneReport(LayerList):
    """What prune did: ``report.pruned``, ``report.skipped``, ``report["layer.name"]``, the
    model's output change on the calibration inputs (``output_cosine``: the mean cosine between
    the dense and the pruned model's output vectors, the rows of its last dimension, padding rows
    left out as for the layers; ``output_relative_error``: ||Y' - Y||_F / ||Y||_F over all of
    them), ``seconds`` in all, and a table as ``str(report)``."""

    def __init__(self, method, pattern, sparsity, layers, output_cosine, output_relative_error,
                 seconds):
        self.method = method
        self.pattern = pattern
        self.sparsity = sparsity
        self.layers = layers
        self.output_cosine = output_cosine
        self.output_relative_error = output_relative_error
        self.seconds = seconds

    @property
    def pruned(self) -> list[PrunedLayer]:
        return [layer for layer in self.layers if layer.pruned]

    @property
    def skipped(self) -> list[PrunedLayer]:
        return [layer for layer in self.layers if not layer.pruned]

    def __str__(self) -> str:
        target = self.pattern or f"{self.sparsity:.0%} unstructured"
        lines = [f"prune {self.method} {target}: {len(self.pruned)} of {len(self.layers)} Linear "
                 f"layers pruned in {self.seconds:.2f} s; model output on the calibration inputs: "
                 f"mean cosine {self.output_cosine:.4f}, relative error "
                 f"{self.output_relative_error:.4f}"]
        width = max([len(_display(layer.name)) for layer in self.layers] + [5])
        lines.append(f"  {'layer':<{width}}  {'shape':>10}  {'sparsity':>8}  {'n:m':>3}  "
                     f"{'rel. error':>10}  {'tokens':>7}  {'seconds':>7}")
        for layer in self.layers:
            shape = f"{layer.shape[0]}x{layer.shape[1]}"
            name = _display(layer.name)
            if not layer.pruned:
                lines.append(f"  {name:<{width}}  {shape:>10}  skipped: {layer.reason}")
                continue
            nm = "-" if layer.nm is None else ("yes" if layer.nm else "NO")
            lines.append(f"  {name:<{width}}  {shape:>10}  {layer.sparsity:>8.2%}  {nm:>3}  "
                         f"{layer.relative_error:>10.4g}  {layer.tokens:>7}  "
                         f"{layer.seconds:>7.3f}")
        return "\n".join(lines)

    __repr__ = __str__


def _display(name: str) -> str:
    return name or "(model)"


# --- arguments ------------------------------------------------------------------------------------

@dataclass
class _Target:
    """How much to prune: an n:m pattern (n, m > 0) or, with m = 0, a fraction unstructured."""

    pattern: str | None
    n: int
    m: int
    sparsity: float


def _check_target(pattern, sparsity):
    """(canonical pattern or None, n, m, sparsity) from the two ways to say how much to prune."""
    if sparsity is not None:
        if isinstance(sparsity, bool) or not isinstance(sparsity, numbers.Real) \
                or not 0.0 <= float(sparsity) < 1.0:
            raise InvalidArgument(f"sparsity {sparsity!r}: expected a fraction in [0, 1), the "
                                  "share of weights to prune")
        sparsity = float(sparsity)
    if pattern is None:
        return None, 0, 0, 0.5 if sparsity is None else sparsity
    try:
        pattern = _C.nm_pattern(str(pattern))
    except SparseFlowError as e:
        raise InvalidArgument(f"pattern: {e}") from None
    n, m = (int(part) for part in pattern.split(":"))
    if sparsity is not None and not math.isclose(sparsity, 1 - n / m, abs_tol=1e-9):
        raise InvalidArgument(f"pattern {pattern} prunes {1 - n / m:.4g} of the weights, but "
                              f"sparsity is {sparsity!r}: give one or the other")
    return pattern, n, m, 1 - n / m


def _calls(calibration_inputs) -> list:
    if isinstance(calibration_inputs, (torch.Tensor, Mapping)):
        calibration_inputs = [calibration_inputs]
    if calibration_inputs is None or isinstance(calibration_inputs, (str, bytes)):
        raise InvalidArgument("calibration_inputs: expected a list of model calls (tensors, "
                              "tuples of arguments or dicts of keyword arguments), got "
                              f"{type(calibration_inputs).__name__}")
    calls = list(calibration_inputs)
    if not calls:
        raise InvalidArgument("calibration_inputs is empty: prune needs at least one input to "
                              "call the model with")
    for i, call in enumerate(calls):
        if not isinstance(call, (torch.Tensor, tuple, list, Mapping)):
            raise InvalidArgument(f"calibration_inputs[{i}] is a {type(call).__name__}; expected "
                                  "a tensor, a tuple/list of arguments or a dict of keyword "
                                  "arguments")
    return calls


def _token_mask(call):
    """The 2-D attention_mask of a keyword call, as booleans, or None."""
    if isinstance(call, Mapping):
        mask = call.get("attention_mask")
        if isinstance(mask, torch.Tensor) and mask.dim() == 2:
            return mask != 0
    return None


def _run(model, call):
    if isinstance(call, torch.Tensor):
        return model(call)
    if isinstance(call, Mapping):
        return model(**call)
    return model(*call)


def _first_tensor(output):
    """The first tensor in a model's output (a tensor, a tuple/list or a mapping such as a
    Hugging Face ModelOutput, whose first field is the last hidden state or the logits)."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, (Mapping, tuple, list)):
        for value in (output.values() if isinstance(output, Mapping) else output):
            found = _first_tensor(value)
            if found is not None:
                return found
    return None


def _output_of(output):
    """The output function prune compares: the user's, or the first tensor of the output."""
    def first(result):
        found = _first_tensor(result)
        if found is None:
            raise InvalidArgument(f"the model's output ({type(result).__name__}) holds no "
                                  "tensor; pass output=a function from it to the tensor to "
                                  "compare")
        return found
    return output or first


def _rows(x: torch.Tensor, mask) -> torch.Tensor:
    """x as a 2-D (tokens, features) matrix, padding tokens left out where mask applies."""
    if mask is not None and x.dim() >= 3 and tuple(x.shape[:2]) == tuple(mask.shape):
        x = x[mask.to(x.device)]
    return x.reshape(-1, x.shape[-1])


def _skip_reason(name, linear, include, exclude, m):
    if not any(fnmatch.fnmatchcase(name, p) for p in include):
        return f"not matched by layers {include}"
    for pattern in exclude:
        if fnmatch.fnmatchcase(name, pattern):
            return f"excluded by '{pattern}'"
    if not linear.weight.dtype.is_floating_point:
        return f"{linear.weight.dtype} weights; prune takes floating-point weights"
    if m and linear.in_features % m != 0:
        return f"in_features {linear.in_features} is not a multiple of {m}"
    return ""


# --- the three methods: W and H = X^T X in float64 -> the pruned W in float64 ------------------

def _keep_top_per_group(scores, n, m):
    """Boolean mask keeping the n highest scores of every m consecutive columns (ties: the
    lower column)."""
    rows, cols = scores.shape
    grouped = scores.reshape(rows, cols // m, m)
    order = torch.sort(grouped, dim=-1, descending=True, stable=True).indices
    keep = torch.zeros_like(grouped, dtype=torch.bool)
    keep.scatter_(-1, order[..., :n], True)
    return keep.reshape(rows, cols)


def _drop_lowest(scores, count, dim=None):
    """Boolean mask keeping all but the ``count`` lowest scores (over all, or along ``dim``)."""
    if dim is None:
        flat = scores.reshape(-1)
        keep = torch.ones_like(flat, dtype=torch.bool)
        keep[torch.sort(flat, stable=True).indices[:count]] = False
        return keep.reshape(scores.shape)
    keep = torch.ones_like(scores, dtype=torch.bool)
    keep.scatter_(dim, torch.sort(scores, dim=dim, stable=True).indices.narrow(dim, 0, count),
                  False)
    return keep


def _magnitude(W, H, target):
    scores = W.abs()
    if target.m:
        return W * _keep_top_per_group(scores, target.n, target.m)
    return W * _drop_lowest(scores, round(W.numel() * target.sparsity))


def _wanda(W, H, target):
    scores = W.abs() * H.diagonal().clamp(min=0).sqrt().unsqueeze(0)
    if target.m:
        return W * _keep_top_per_group(scores, target.n, target.m)
    return W * _drop_lowest(scores, round(W.shape[1] * target.sparsity), dim=1)


def _inverse_cholesky(H, damp):
    """The upper Cholesky factor of (H + lambda I)^-1, lambda = damp x mean diagonal (raised
    tenfold, up to five times, until H + lambda I is positive definite in float64)."""
    mean = float(H.diagonal().mean())
    scale = mean if mean > 0 else 1.0
    eye = torch.eye(H.shape[0], dtype=H.dtype)
    for attempt in range(6):
        damped = H + (damp * 10 ** attempt * scale) * eye
        L, info = torch.linalg.cholesky_ex(damped)
        if int(info) == 0:
            U, info = torch.linalg.cholesky_ex(torch.cholesky_inverse(L), upper=True)
            if int(info) == 0:
                return U
    raise InvalidArgument("sparsegpt: the calibration Hessian stays singular even with "
                          f"dampening {damp * 1e5:g} x its mean diagonal (are the inputs finite?)")


def _sparsegpt(W, H, target, block_size, damp):
    W = W.clone()
    rows, cols = W.shape
    U = _inverse_cholesky(H, damp)
    n, m = target.n, target.m
    for start in range(0, cols, block_size):
        end = min(start + block_size, cols)
        W1 = W[:, start:end].clone()
        U1 = U[start:end, start:end]
        d = U1.diagonal()
        errors = torch.zeros_like(W1)
        if not m:
            scores = W1.square() / d.square().unsqueeze(0)
            keep = _drop_lowest(scores, round(W1.numel() * target.sparsity))
        else:
            keep = torch.ones_like(W1, dtype=torch.bool)
        for j in range(end - start):
            if m and j % m == 0:
                group = slice(j, j + m)
                scores = W1[:, group].square() / d[group].square().unsqueeze(0)
                keep[:, group] = _keep_top_per_group(scores, n, m)
            w = W1[:, j]
            q = torch.where(keep[:, j], w, torch.zeros_like(w))
            err = (w - q) / d[j]
            W1[:, j:] -= err.unsqueeze(1) * U1[j, j:].unsqueeze(0)
            W1[:, j] = q  # exactly zero where pruned, whatever rounding the update left
            errors[:, j] = err
        W[:, start:end] = W1
        W[:, end:] -= errors @ U[start:end, end:]
    return W


def _relative_error(before, after, H):
    """||X (W - W')^T||_F / ||X W^T||_F from H = X^T X."""
    delta = before - after
    num = float(((delta @ H) * delta).sum())
    den = float(((before @ H) * before).sum())
    if den <= 0:
        return 0.0 if num <= 0 else math.inf
    return math.sqrt(max(num, 0.0) / den)


def _passes_nm_check(weight, pattern):
    from .tensors import from_torch

    try:
        return bool(_C.nm_is_nm(from_torch(weight.detach().cpu().contiguous()), pattern))
    except SparseFlowError:  # a dtype sparseflow's tensors do not hold: the same check here
        n, m = (int(part) for part in pattern.split(":"))
        groups = weight.detach().reshape(weight.shape[0], -1, m)
        return bool(((groups != 0).sum(-1) <= n).all())


# --- capture -------------------------------------------------------------------------------------

class _StopForward(Exception):
    """Raised by a capture hook once the layers being captured have seen all their inputs."""


def _trace_calls(model, linears, calls, output):
    """One dense pass: each call's per-layer call counts, the first-call order of the layers,
    which layers were called on the same input tensor as the layer called just before them, and
    the model's outputs."""
    counts = [dict() for _ in calls]
    order, shares_input = [], set()
    state = {"call": 0, "previous": None}

    def hook(module, inputs, _output):
        key = id(module)
        per_call = counts[state["call"]]
        per_call[key] = per_call.get(key, 0) + 1
        if key not in order_set:
            order_set.add(key)
            previous = state["previous"]
            if previous is not None and order and previous[0] == order[-1] and inputs \
                    and inputs[0] is previous[1]:
                shares_input.add(key)  # same input tensor as the layer first called before it
            order.append(key)
        state["previous"] = (key, inputs[0] if inputs else None)

    order_set = set()
    handles = [linear.register_forward_hook(hook) for linear in linears.values()]
    outputs = []
    try:
        for i, call in enumerate(calls):
            state["call"], state["previous"] = i, None
            outputs.append(_output_rows(output(_run(model, call)), _token_mask(call)))
    finally:
        for handle in handles:
            handle.remove()
    return counts, order, shares_input, outputs


def _output_rows(y, mask):
    if not isinstance(y, torch.Tensor):
        raise InvalidArgument(f"output returned a {type(y).__name__}; expected a tensor")
    y = y.detach()
    if y.dim() == 0:
        return y.reshape(1, 1).double().cpu()
    return _rows(y, mask).double().cpu()


def _capture(model, group, linears, calls, counts):
    """X^T X (float64) and the token count of each layer of ``group`` on every call."""
    stats = {key: [None, 0] for key in group}
    state = {"seen": {}, "need": {}, "mask": None}

    def hook(module, inputs, _output):
        key = id(module)
        x = _rows(inputs[0].detach(), state["mask"]).float().cpu()
        gram = (x.T @ x).double()  # one call's tokens in float32 (fast), summed in float64
        entry = stats[key]
        entry[0] = gram if entry[0] is None else entry[0].add_(gram)
        entry[1] += x.shape[0]
        state["seen"][key] = state["seen"].get(key, 0) + 1
        if all(state["seen"].get(k, 0) >= c for k, c in state["need"].items()):
            raise _StopForward

    handles = [linears[key].register_forward_hook(hook) for key in group]
    try:
        for i, call in enumerate(calls):
            need = {key: counts[i].get(key, 0) for key in group}
            state["need"] = {key: c for key, c in need.items() if c}
            if not state["need"]:
                continue  # this call never reaches the group's layers
            state["seen"], state["mask"] = {}, _token_mask(call)
            try:
                _run(model, call)
            except _StopForward:
                pass
    finally:
        for handle in handles:
            handle.remove()
    return stats


def _compare_outputs(dense, pruned):
    num = den = 0.0
    cosines = []
    for y, z in zip(dense, pruned):
        if y.shape != z.shape:
            raise InvalidArgument(f"the model's output changed shape when pruned: {tuple(y.shape)} "
                                  f"-> {tuple(z.shape)}")
        num += float((z - y).square().sum())
        den += float(y.square().sum())
        cosines.append(torch.nn.functional.cosine_similarity(y, z, dim=-1, eps=1e-30))
    cosine = float(torch.cat(cosines).mean()) if cosines else 1.0
    relative = math.sqrt(num / den) if den > 0 else (0.0 if num == 0 else math.inf)
    return cosine, relative


# --- prune ---------------------------------------------------------------------------------------

def prune(model: torch.nn.Module, calibration_inputs, pattern: str | None = None,
          sparsity: float | None = None, method: str = "sparsegpt", layers=None, exclude=None,
          sequential: bool = True, block_size: int = 128, damp: float = 0.01,
          output=None) -> PruneReport:
    """Prunes the chosen nn.Linear weights of ``model`` in place, calibrated on
    ``calibration_inputs``, and reports every Linear layer and the model's output change.

    pattern: "n:m" (e.g. "2:4": in every m consecutive weights of a row, n stay), or None for
    unstructured pruning to ``sparsity`` (default 0.5; with a pattern it must be 1 - n/m or
    None). method: "sparsegpt" (default), "wanda" or "magnitude" (see the module's doc).
    layers / exclude: fnmatch patterns (a string or a list) on qualified module names such as
    ``"encoder.layer.*.intermediate.dense"``; default every Linear. A layer is also skipped
    (with the reason in the report) when it has non-floating weights, when in_features is not a
    multiple of m, or when no calibration input calls it (nn.MultiheadAttention's out_proj,
    whose weight the attention reads directly). calibration_inputs: a list of model calls (a
    tensor, a tuple of arguments or a dict of keyword arguments each). sequential, block_size
    (SparseGPT's column block, a multiple of m) and damp (SparseGPT's dampening, a fraction of
    H's mean diagonal): see the module's doc. output: a function from the model's output to the
    tensor the report compares (default: the first tensor in it).
    """
    if not isinstance(model, torch.nn.Module):
        raise InvalidArgument(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if method not in METHODS:
        raise InvalidArgument(f"method {method!r}: expected one of {', '.join(METHODS)}")
    target = _Target(*_check_target(pattern, sparsity))
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1 \
            or (target.m and block_size % target.m):
        raise InvalidArgument(f"block_size {block_size!r}: expected a positive integer"
                              + (f" that is a multiple of m = {target.m}" if target.m else ""))
    if not isinstance(damp, numbers.Real) or not damp > 0 or not math.isfinite(damp):
        raise InvalidArgument(f"damp {damp!r}: expected a positive fraction (0.01 in the paper)")
    include = [layers] if isinstance(layers, str) else list(layers or ["*"])
    exclude = [exclude] if isinstance(exclude, str) else list(exclude or [])
    output = _output_of(output)

    names, linears = {}, {}
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and id(module) not in names:
            names[id(module)] = name  # a layer reachable under two names: its first
            linears[id(module)] = module
    if not linears:
        raise InvalidArgument(f"model ({type(model).__name__}) has no torch.nn.Linear layer to "
                              "prune")
    calls = _calls(calibration_inputs)
    reasons = {key: _skip_reason(names[key], linears[key], include, exclude, target.m)
               for key in linears}
    chosen = {key: linears[key] for key in linears if not reasons[key]}
    if not chosen:
        raise InvalidArgument(f"no torch.nn.Linear layer of the model is left to prune with "
                              f"layers={include} and exclude={exclude}: "
                              + "; ".join(f"{_display(names[k])}: {reasons[k]}" for k in linears))

    started = time.perf_counter()
    modes = {module: module.training for module in model.modules()}
    model.eval()
    results = {}
    try:
        with torch.no_grad():
            counts, order, shares_input, dense_outputs = _trace_calls(model, chosen, calls, output)
            in_attention = {id(m) for module in model.modules()
                            if isinstance(module, torch.nn.MultiheadAttention)
                            for m in module.modules()}
            for key in chosen:
                if key not in order:
                    reasons[key] = "not called on the calibration inputs" + (
                        " (inside nn.MultiheadAttention, which reads the weight directly)"
                        if key in in_attention else "")
            groups = []
            for key in order:
                if groups and (not sequential or key in shares_input):
                    groups[-1].append(key)
                else:
                    groups.append([key])
            for group in groups:
                stats = _capture(model, group, linears, calls, counts)
                for key in group:
                    H, tokens = stats[key]
                    if not tokens:  # all padding, or the pruned model took another path
                        reasons[key] = "no calibration token reached it"
                        continue
                    results[key] = _prune_layer(names[key], linears[key], H, tokens, target,
                                                method, block_size, damp)
            pruned_outputs = []
            for call in calls:
                pruned_outputs.append(_output_rows(output(_run(model, call)), _token_mask(call)))
            cosine, relative = _compare_outputs(dense_outputs, pruned_outputs)
    finally:
        for module, training in modes.items():
            module.train(training)

    report_layers = []
    for key, linear in linears.items():
        shape = (linear.out_features, linear.in_features)
        if key in results:
            report_layers.append(results[key])
        else:
            report_layers.append(PrunedLayer(names[key], shape, False, reasons[key]))
    return PruneReport(method, target.pattern, target.sparsity, report_layers, cosine, relative,
                       time.perf_counter() - started)


def _prune_layer(name, linear, H, tokens, target, method, block_size, damp):
    started = time.perf_counter()
    weight = linear.weight
    before = weight.detach().to(device="cpu", dtype=torch.float64)
    if method == "sparsegpt":
        after = _sparsegpt(before, H / tokens, target, block_size, damp)
    elif method == "wanda":
        after = _wanda(before, H, target)
    else:
        after = _magnitude(before, H, target)
    weight.data.copy_(after.to(device=weight.device, dtype=weight.dtype))
    written = weight.detach().to(device="cpu", dtype=torch.float64)
    seconds = time.perf_counter() - started
    return PrunedLayer(
        name, (linear.out_features, linear.in_features), True,
        sparsity=float((written == 0).sum()) / written.numel(),
        nm=_passes_nm_check(weight, target.pattern) if target.pattern else None,
        relative_error=_relative_error(before, written, H), tokens=tokens, seconds=seconds)


__all__ = ["PruneReport", "PrunedLayer", "prune"]
