"""Plain-words facts about what a backward node keeps, for the `note:` lines."""

from __future__ import annotations

# Backward nodes whose formula is worth spelling out; others get a generic sentence.
NODE_FORMULAS = {
    "TanhBackward0": "grad * (1 - tanh(x)**2) from its saved output",
    "SigmoidBackward0": "grad * sigmoid(x) * (1 - sigmoid(x)) from its saved output",
    "ExpBackward0": "grad * exp(x) from its saved output",
    "ReluBackward0": "grad where its saved output > 0",
    "ThresholdBackward0": "grad where its saved input > threshold",
    "SqrtBackward0": "grad / (2 * sqrt(x)) from its saved output",
    "SoftmaxBackward0": "the softmax Jacobian-vector product from its saved output",
    "LogSoftmaxBackward0": "grad - exp(output) * grad.sum() from its saved output",
    "MulBackward0": "grad * other for self and grad * self for other, from its saved inputs",
    "DivBackward0": "grad / other and -grad * self / other**2 from its saved inputs",
    "MmBackward0": "grad @ mat2.T and self.T @ grad from its saved inputs",
    "AddmmBackward0": "the gradients of a linear layer from its saved input and weight",
    "PowBackward0": "grad * exponent * self**(exponent - 1) from its saved input",
    "SinBackward0": "grad * cos(x) from its saved input",
    "CosBackward0": "-grad * sin(x) from its saved input",
}


def describe_slot(node_name: str | None, slot: str | None) -> str:
    """'tanh keeps its output for backward', 'mul keeps its input `other`', ..."""
    op = operator_of(node_name)
    if slot == "result":
        return f"{op} keeps its output for backward"
    if slot and slot.startswith("saved_tensors["):
        function = node_name[: -len("Backward")] if node_name and node_name.endswith("Backward") else op
        return f"{function}.forward saved it with ctx.save_for_backward ({slot})"
    if slot:
        return f"{op} keeps its input `{slot}` for backward"
    return f"{op} keeps this tensor for backward" if node_name else "autograd saved this tensor for backward"


def operator_of(node_name: str | None) -> str:
    if not node_name:
        return "the op"
    name = node_name
    for suffix in ("Backward0", "Backward1", "Backward2", "Backward"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.lower() if name else node_name


def node_note(node_name: str | None, slot: str | None) -> str | None:
    if not node_name:
        return None
    formula = NODE_FORMULAS.get(node_name)
    which = "output" if slot == "result" else (f"input `{slot}`" if slot else "tensor")
    if formula:
        return f"{node_name} computes {formula}; the saved {which} changed, so the gradient would be wrong"
    return f"{node_name} reads its saved {which} during backward; it changed, so the gradient would be wrong"
