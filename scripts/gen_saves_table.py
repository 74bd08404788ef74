"""Generate ``src/autograd_doctor/lint/data/saves.json`` from the installed torch.

For each op we run it once on small tensors that require grad and read the
``_saved_*`` attributes of the output's ``grad_fn``.  A saved tensor that shares
storage with the output means "the op keeps its output"; one that shares
storage with input ``i`` means "the op keeps input ``i``".  The linter uses the
table to decide whether an in-place write to a name can break ``backward()``.

Ops with several overloads that save different things (``torch.min(a, b)``
keeps both inputs, ``torch.min(a, dim)`` only the indices of the minima,
``torch.min(a)`` its input and its output) get one key per overload,
``torch.min:other`` / ``torch.min:dim`` / ``torch.min``, the way the linter
tells them apart at a call (a tensor second argument, another second argument
or ``dim=``, none).  Each such entry names the ATen overload it dispatches to
(``aten``) and what PyTorch's derivative formula for it
(``torchgen/packaged/autograd/derivatives.yaml``, shipped with torch) reads:
the probe and the formula must agree, or the script stops.

    python scripts/gen_saves_table.py            # rewrite the shipped table
    python scripts/gen_saves_table.py --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TABLE_PATH = Path(__file__).resolve().parents[1] / "src" / "autograd_doctor" / "lint" / "data" / "saves.json"

# (key, how to call it, input shapes).  The key is the name the linter resolves
# a call to: ``torch.X`` for functions, ``torch.Tensor.X`` for methods,
# ``torch.nn.functional.X`` for functionals and ``operator.X`` for operators.
# A scalar second operand is spelled ``operator.X:scalar``.
UNARY_TORCH = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sigmoid", "tanh", "relu", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "asinh", "atanh", "erf", "erfinv", "reciprocal", "abs",
    "square", "neg", "logit", "sinc", "lgamma", "digamma", "cumsum",
    "cumprod", "prod", "norm", "sum", "mean", "std", "var", "logsumexp",
    "clamp", "trunc", "floor", "round", "frac",
]
DIM_OPS = {"cumsum", "cumprod", "logsumexp", "softmax", "log_softmax"}
BINARY_TORCH = ["mul", "div", "add", "sub", "pow", "matmul", "mm", "atan2",
                "maximum", "minimum", "hypot", "dot", "true_divide", "bmm",
                "remainder", "fmod"]
FUNCTIONAL_UNARY = [
    "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish",
    "leaky_relu", "softplus", "hardtanh", "hardswish", "hardsigmoid",
    "sigmoid", "tanh", "logsigmoid", "softsign", "tanhshrink", "softmax",
    "log_softmax", "softmin", "normalize", "glu", "dropout",
]
# In-place activations (`F.relu(x, inplace=True)`, `nn.ReLU(inplace=True)`), keyed
# `torch.nn.functional.X:inplace`, probed on a non-leaf (a leaf that requires grad
# refuses the write).  Some keep the tensor they wrote (relu_, elu_, leaky_relu_),
# others a copy of their input that autograd takes before the write (hardswish_,
# silu_, hardtanh_): only for the first kind does a later write to the result
# break backward.
INPLACE_ACTIVATIONS = {
    "relu": (), "relu6": (), "elu": (), "selu": (), "celu": (), "leaky_relu": (),
    "rrelu": (), "hardtanh": (), "silu": (), "mish": (), "hardswish": (),
    "hardsigmoid": (), "threshold": (0.5, 0.0),
}
# Python overloads told apart by their arguments: (key, ATen overload of its
# derivative formula, call, input shapes).  Values are distinct so that each
# minimum is unique.
OVERLOADED = [
    (f"{prefix}{name}{suffix}", aten, call, shapes)
    for prefix in ("torch.", "torch.Tensor.")
    for name in ("min", "max")
    for suffix, aten, call, shapes in (
        (":other", "minimum" if name == "min" else "maximum",
         lambda fn: (lambda a, b: fn(a, b)), [(3, 3), (3, 3)]),
        (":dim", f"{name}.dim", lambda fn: (lambda a: fn(a, 0)), [(3, 3)]),
        ("", name, lambda fn: (lambda a: fn(a)), [(3, 3)]),
    )
]
OPERATORS = {"mul": "__mul__", "truediv": "__truediv__", "add": "__add__",
             "sub": "__sub__", "pow": "__pow__", "matmul": "__matmul__"}


def _storage(t):
    return t.untyped_storage().data_ptr()


def _classify(grad_fn, inputs, output):
    """Return (saves_output, sorted input indices saved, saved attribute names)."""
    saves_output, saved_inputs, names = False, set(), []
    for attr in sorted(dir(grad_fn)):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(grad_fn, attr)
        except Exception:  # noqa: BLE001 - some slots raise when unset
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        for v in values:
            if not hasattr(v, "untyped_storage"):
                continue
            names.append(attr[len("_saved_"):])
            if output is not None and _storage(v) == _storage(output):
                saves_output = True
            for i, inp in enumerate(inputs):
                if hasattr(inp, "untyped_storage") and _storage(v) == _storage(inp):
                    saved_inputs.add(i)
    return saves_output, sorted(saved_inputs), sorted(set(names))


def derivative_formulas() -> dict[str, tuple[list[str], list[str]]]:
    """``{"minimum": (["self", "other"], [backward formula, ...]), ...}``: the
    Tensor arguments and the backward formulas of each ATen overload in
    PyTorch's derivatives.yaml (the forward-mode ``result:`` lines left out)."""
    import torchgen

    path = Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml"
    formulas: dict[str, tuple[list[str], list[str]]] = {}
    name, arguments, lines = None, [], []
    for line in path.read_text(encoding="utf-8").splitlines() + ["- name: end()"]:
        header = re.match(r"- name: ([\w.]+)\((.*)\) ->", line)
        if header:
            if name is not None:
                formulas[name] = (arguments, lines)
            name, lines = header.group(1), []
            arguments = [a.split()[-1].split("=")[0] for a in header.group(2).split(", ")
                         if a.startswith("Tensor")]
            continue
        item = re.match(r"  ([\w, ]+): (.*)", line)
        if item and name is not None and not item.group(1).startswith(("result", "output_", "dispatch")) \
                and not any(key in ("values", "indices") for key in item.group(1).split(", ")):
            lines.append(item.group(2))
    return formulas


# Uses of a saved argument that need only its metadata, not its values.
_METADATA = r"\.(?:sym_)?(?:sizes|size|options|scalar_type|dim|numel|strides|device|dtype)\(\)"


def formula_reads(arguments: list[str], lines: list[str]) -> tuple[bool, list[int]]:
    """What the backward formulas read: the result (``result``, ``result0``...)
    and the indices of the Tensor arguments whose values they use."""
    text = re.sub(r"\b(\w+)" + _METADATA, "", " ".join(lines))
    words = set(re.findall(r"\b\w+\b", text))
    reads_result = any(w == "result" or re.fullmatch(r"result\d", w) for w in words)
    return reads_result, [i for i, a in enumerate(arguments) if a in words]


def _entry(fn, inputs, **kwargs):
    import torch

    out = fn(*inputs, **kwargs)
    if isinstance(out, (tuple, list)):
        out = out[0]
    if not isinstance(out, torch.Tensor) or out.grad_fn is None:
        return None
    saves_output, saved_inputs, names = _classify(out.grad_fn, inputs, out)
    entry = {"grad_fn": type(out.grad_fn).__name__, "output": saves_output,
             "inputs": saved_inputs, "saved": names}
    kept_for = _kept_for(fn, inputs, saved_inputs, kwargs)
    if kept_for:
        entry["kept_for"] = kept_for
    return entry


def _outputs_entry(fn, inputs):
    """An op that returns several tensors and keeps some of them for backward
    (``torch.linalg.svd`` keeps ``U``, ``S`` and ``Vh``): the entry names the kept
    positions (``outputs``) and how many tensors it returns (``count``); ``output`` is
    False (its result, a tuple, is no tensor)."""
    import torch

    outs = fn(*inputs)
    outs = [o for o in outs if isinstance(o, torch.Tensor)]
    grad_fn = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    if grad_fn is None:
        return None
    kept = [i for i, o in enumerate(outs) if _classify(grad_fn, [], o)[0]]
    _, saved_inputs, names = _classify(grad_fn, inputs, None)
    return {"grad_fn": type(grad_fn).__name__, "output": False, "outputs": kept, "count": len(outs),
            "inputs": saved_inputs, "saved": names}


def _linear_algebra_ops(torch, leaf):
    """Decompositions and inverses (``torch.linalg``): ``(key, call, inputs, several
    outputs)``.  A decomposition keeps its factors; unpacked (`U, S, Vh =
    torch.linalg.svd(a)`), each kept factor is a saved output, and writing it in place
    (`S *= norm` after a truncation) breaks backward."""
    def symmetric():
        m = torch.rand(3, 3)
        return (m @ m.T + 3 * torch.eye(3)).requires_grad_()

    yield "torch.linalg.svd", lambda a: torch.linalg.svd(a, full_matrices=False), [leaf(4, 3)], True
    yield "torch.svd", torch.svd, [leaf(4, 3)], True
    yield "torch.Tensor.svd", torch.Tensor.svd, [leaf(4, 3)], True
    yield "torch.linalg.eigh", torch.linalg.eigh, [symmetric()], True
    yield "torch.linalg.qr", torch.linalg.qr, [leaf(4, 3)], True
    yield "torch.linalg.slogdet", torch.linalg.slogdet, [symmetric()], True
    yield "torch.linalg.inv", torch.linalg.inv, [symmetric()], False
    yield "torch.inverse", torch.inverse, [symmetric()], False
    yield "torch.Tensor.inverse", torch.Tensor.inverse, [symmetric()], False
    yield "torch.linalg.cholesky", torch.linalg.cholesky, [symmetric()], False
    yield "torch.linalg.matrix_exp", torch.linalg.matrix_exp, [leaf(3, 3)], False
    yield "torch.linalg.det", torch.linalg.det, [symmetric()], False
    yield "torch.det", torch.det, [symmetric()], False
    yield "torch.Tensor.det", torch.Tensor.det, [symmetric()], False


def _kept_for(fn, inputs, saved_inputs, kwargs) -> dict:
    """Inputs (of the first two) that the op keeps only for the gradient of the
    other one: run again with the other input not requiring grad.  `a * b` keeps
    `a` only to compute `b`'s gradient (MulBackward0 has no `self` when `b` needs
    none): {"0": 1, "1": 0}; `a / b` keeps `a` only for `b`: {"0": 1}."""
    import torch

    kept_for = {}
    for i in saved_inputs:
        j = 1 - i
        if i > 1 or len(inputs) < 2 or not all(isinstance(t, torch.Tensor) for t in inputs[:2]):
            continue
        probe = list(inputs)
        probe[j] = inputs[j].detach()
        out = fn(*probe, **kwargs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        if out.grad_fn is not None and i not in _classify(out.grad_fn, probe, out)[1]:
            kept_for[str(i)] = j
    return kept_for


def _layer_and_index_ops(torch, F, leaf):
    """Convolutions, normalisation, pooling, losses, attention and the ops that
    gather or scatter by an index: ``(key, call, positional arguments)``, laid out
    as a user's call passes them, so that input ``i`` is the call's argument
    ``i`` (an integer index counts: ``x.gather(0, idx)`` keeps ``idx``, and
    ``idx //= 2`` afterwards breaks backward)."""
    def index(*values):
        return torch.tensor(values)

    def both(name, inputs):  # `torch.X(a, ...)` and `a.X(...)`
        yield f"torch.{name}", getattr(torch, name), inputs
        yield f"torch.Tensor.{name}", getattr(torch.Tensor, name), inputs

    yield from [
        ("torch.nn.functional.conv1d", F.conv1d, [leaf(1, 2, 5), leaf(3, 2, 3)]),
        ("torch.nn.functional.conv3d", F.conv3d, [leaf(1, 2, 3, 3, 3), leaf(3, 2, 2, 2, 2)]),
        ("torch.nn.functional.conv_transpose1d", F.conv_transpose1d, [leaf(1, 2, 5), leaf(2, 3, 3)]),
        ("torch.nn.functional.conv_transpose2d", F.conv_transpose2d, [leaf(1, 2, 4, 4), leaf(2, 3, 3, 3)]),
        ("torch.nn.functional.conv_transpose3d", F.conv_transpose3d,
         [leaf(1, 2, 3, 3, 3), leaf(2, 3, 2, 2, 2)]),
        ("torch.nn.functional.group_norm", lambda x: F.group_norm(x, 2), [leaf(2, 4, 3)]),
        ("torch.nn.functional.batch_norm", lambda x: F.batch_norm(x, None, None, training=True), [leaf(4, 3)]),
        ("torch.nn.functional.embedding", F.embedding, [index(0, 2), leaf(3, 2)]),
        ("torch.nn.functional.grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False),
         [leaf(1, 1, 3, 3), leaf(1, 2, 2, 2)]),
        ("torch.nn.functional.max_pool2d", lambda x: F.max_pool2d(x, 2), [leaf(1, 1, 4, 4)]),
        ("torch.nn.functional.cosine_similarity", F.cosine_similarity, [leaf(2, 3), leaf(2, 3)]),
        ("torch.nn.functional.binary_cross_entropy", F.binary_cross_entropy, [leaf(3), torch.rand(3)]),
        ("torch.nn.functional.binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
         [leaf(3), torch.rand(3)]),
        ("torch.nn.functional.l1_loss", F.l1_loss, [leaf(3), leaf(3)]),
        ("torch.nn.functional.smooth_l1_loss", F.smooth_l1_loss, [leaf(3), leaf(3)]),
        ("torch.nn.functional.nll_loss", F.nll_loss, [leaf(2, 3), index(0, 2)]),
        ("torch.linalg.norm", torch.linalg.norm, [leaf(3, 3)]),
        ("torch.linalg.vector_norm", torch.linalg.vector_norm, [leaf(3, 3)]),
        ("torch.cdist", torch.cdist, [leaf(2, 3), leaf(4, 3)]),
        ("torch.outer", torch.outer, [leaf(3), leaf(3)]),
        ("torch.where", torch.where, [index(1, 0, 1).bool(), leaf(3), leaf(3)]),
    ]
    yield from both("gather", [leaf(3, 2), 0, index([0, 1], [2, 0])])
    yield from both("index_select", [leaf(3, 2), 0, index(2, 0)])
    yield from both("take_along_dim", [leaf(3, 2), index([0, 1], [2, 0]), 0])
    yield from both("scatter_add", [leaf(3, 2), 0, index([0, 1], [2, 0]), leaf(2, 2)])
    yield from both("index_add", [leaf(3, 2), 0, index(2, 0), leaf(2, 2)])
    yield from both("masked_fill", [leaf(3), index(1, 0, 1).bool(), 0.0])
    yield from both("masked_select", [leaf(3), index(1, 0, 1).bool()])


def build_table() -> dict:
    """Run every op once and return the table as a JSON-ready dict."""
    import operator

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)

    def leaf(*shape):
        # Values in (0.1, 0.9): valid for log, sqrt, asin, logit, erfinv...
        return (torch.rand(*shape) * 0.8 + 0.1).requires_grad_()

    ops: dict[str, dict] = {}

    def add(key, fn, inputs, **kwargs):
        try:
            entry = _entry(fn, inputs, **kwargs)
        except Exception:  # noqa: BLE001 - op not available in this torch
            return
        if entry is not None:
            ops[key] = entry

    for name in UNARY_TORCH + ["softmax", "log_softmax"]:
        fn = getattr(torch, name, None)
        if fn is None:
            continue
        kwargs = {"dim": 0} if name in DIM_OPS else {}
        if name == "clamp":
            kwargs = {"min": 0.2, "max": 0.8}
        add(f"torch.{name}", fn, [leaf(3, 3)], **kwargs)
        if hasattr(torch.Tensor, name):
            add(f"torch.Tensor.{name}", getattr(torch.Tensor, name), [leaf(3, 3)], **kwargs)
    for name in BINARY_TORCH:
        fn = getattr(torch, name, None)
        if fn is None:
            continue
        shapes = [(2, 3, 3), (2, 3, 3)] if name == "bmm" else [(3,), (3,)] if name == "dot" else [(3, 3), (3, 3)]
        add(f"torch.{name}", fn, [leaf(*s) for s in shapes])
        if hasattr(torch.Tensor, name):
            add(f"torch.Tensor.{name}", getattr(torch.Tensor, name), [leaf(*s) for s in shapes])
    for name in FUNCTIONAL_UNARY:
        fn = getattr(F, name, None)
        if fn is None:
            continue
        kwargs = {"dim": 0} if name in ("softmax", "log_softmax", "softmin", "glu") else {}
        add(f"torch.nn.functional.{name}", fn, [leaf(4, 4)], **kwargs)
    for name, extra in INPLACE_ACTIVATIONS.items():
        fn = getattr(F, name, None)
        if fn is not None:
            add(f"torch.nn.functional.{name}:inplace",
                lambda x, fn=fn, extra=extra: fn(x * 1, *extra, inplace=True), [leaf(4, 4)])
    add("torch.nn.functional.linear", F.linear, [leaf(2, 3), leaf(4, 3), leaf(4)])
    add("torch.nn.functional.conv2d", F.conv2d, [leaf(1, 2, 5, 5), leaf(3, 2, 3, 3)])
    add("torch.nn.functional.layer_norm", lambda x: F.layer_norm(x, (3,)), [leaf(2, 3)])
    for key, fn, inputs in _layer_and_index_ops(torch, F, leaf):
        add(key, fn, inputs)
    for key, fn, inputs, several in _linear_algebra_ops(torch, leaf):
        if several:
            entry = _outputs_entry(fn, inputs)
            if entry is not None:
                ops[key] = entry
        else:
            add(key, fn, inputs)
    add("torch.nn.functional.mse_loss", F.mse_loss, [leaf(3), leaf(3)])
    add("torch.nn.functional.cross_entropy", F.cross_entropy, [leaf(2, 3), torch.tensor([0, 2])])
    formulas = derivative_formulas()
    for key, aten, call, shapes in OVERLOADED:
        name = key.split(":")[0].rsplit(".", 1)[-1]
        fn = getattr(torch.Tensor if key.startswith("torch.Tensor.") else torch, name)
        inputs = [torch.randperm(9).float().add(1).view(*s).requires_grad_() for s in shapes]
        add(key, call(fn), inputs)
        reads_output, reads_inputs = formula_reads(*formulas[aten])
        probed = ops[key]
        if (probed["output"], probed["inputs"]) != (reads_output, reads_inputs):
            raise SystemExit(f"{key}: the probe says output={probed['output']} inputs={probed['inputs']}, "
                             f"the derivative formula of {aten} reads output={reads_output} "
                             f"inputs={reads_inputs}")
        probed["aten"] = aten
    for key, dunder in OPERATORS.items():
        fn = getattr(operator, key)
        add(f"operator.{key}", fn, [leaf(3, 3), leaf(3, 3)])
        add(f"operator.{key}:scalar", lambda x, fn=fn: fn(x, 2.0), [leaf(3, 3)])
    # Public Tensor methods: a method call on a known tensor gives a tensor only
    # if the method exists here (``t.metadata()`` on a subclass does not count).
    tensor_methods = sorted(name for name in dir(torch.Tensor)
                            if not name.startswith("_") and callable(getattr(torch.Tensor, name, None)))
    return {
        "torch_version": torch.__version__.split("+")[0],
        "tensor_methods": tensor_methods,
        "comment": "Generated by scripts/gen_saves_table.py; do not edit by hand.",
        "ops": dict(sorted(ops.items())),
    }


def render(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render(build_table())
    if "--check" in argv:
        current = TABLE_PATH.read_text(encoding="utf-8") if TABLE_PATH.exists() else ""
        if current != text:
            print(f"{TABLE_PATH} is out of date; run scripts/gen_saves_table.py", file=sys.stderr)
            return 1
        return 0
    TABLE_PATH.parent.mkdir(parents=True, exist_ok=True)
    TABLE_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE_PATH} ({text.count('grad_fn')} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
