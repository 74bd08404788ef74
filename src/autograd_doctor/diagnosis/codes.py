"""The registry of the run-time doctor's diagnosis codes: the error index.

Each code is declared once, here, with its constant (what the analysis puts in a
Diagnosis), its title (the report's first line), its long explanation (what
`autograd-doctor explain CODE` prints and docs/codes.md carries, written by
scripts/gen_codes_doc.py) and its example program: the explanation's "Minimal example",
completed by the lines a reader would supply (`example_setup`, kept out of the docs as
rustc's hidden lines are). tests/docs/test_codes_examples.py runs each example under the
doctor and checks that it gets its code, as rustc tests the example of each error code.

Errors (`AD1xx`) explain an exception PyTorch raised; warnings (`AD2xx`) are problems
PyTorch raises nothing for; `AD3xx` explain gradient-path and copy mistakes.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

# The imports every example program starts with.
EXAMPLE_PRELUDE = "import copy\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@dataclass(frozen=True)
class CodeEntry:
    """One code of the index. `heading` is the explanation's heading where it is shorter
    than the title. The example: `example_setup` runs before it; `example_around` is the
    program around an example that is a fragment (a method of a custom autograd.Function),
    with `{fragment}` where it goes; `example_watch` the watch() options it needs to be
    seen; `example_not_runnable` why it cannot run alone (then it is not run)."""

    code: str
    title: str
    body: str
    heading: str = ""
    example_setup: str = ""
    example_around: str = ""
    example_watch: dict = field(default_factory=dict)
    example_not_runnable: str = ""

    @property
    def explanation(self) -> str:
        return f"## {self.code}: {self.heading or self.title}\n\n{self.body}"

    def minimal_example(self) -> str:
        """The explanation's "Minimal example" block, dedented."""
        found = re.search(r"\*\*Minimal example\.\*\*\n\n((?:    .*\n|\n)+)", self.body)
        if found is None:
            raise ValueError(f"{self.code}: no minimal example")
        return textwrap.dedent(found.group(1)).strip("\n") + "\n"

    def example_program(self) -> str:
        """The minimal example as a program that runs on its own."""
        example = self.minimal_example()
        if self.example_around:
            fragment = textwrap.indent(example.rstrip("\n"), "    ")
            return EXAMPLE_PRELUDE + self.example_around.format(fragment=fragment)
        return EXAMPLE_PRELUDE + self.example_setup + example


REGISTRY: dict[str, CodeEntry] = {}


def _code(code: str, title: str, body: str, heading: str = "", **example) -> str:
    """Register a code; returns it, for its constant."""
    assert code not in REGISTRY, f"{code} is declared twice"
    REGISTRY[code] = CodeEntry(code, title, body, heading, **example)
    return code


# ---- AD1xx: an exception PyTorch raised ------------------------------------------------

SAVED_TENSOR_MODIFIED = _code(
    "AD101",
    "a tensor that autograd saved was modified in place before backward()",
    """\
**What it means.** During the forward pass, many operations keep ("save") a tensor
that their backward formula needs: `tanh`, `sigmoid`, `exp`, `relu`, `softmax` keep
their *output*; `mul`, `div`, `matmul`, `linear`, `pow`, `sin` keep their *inputs*.
Autograd stamps each saved tensor with its version counter. An in-place write
(`t[i] = v`, `t += u`, `t.mul_(s)`, `relu(inplace=True)`, `out=t`, a write through
a view of `t`) bumps the counter; when backward later needs the tensor, the versions
differ and PyTorch raises "one of the variables needed for gradient computation has
been modified by an inplace operation". PyTorch does not say which line wrote.
autograd-doctor does: the primary location is the write, with the save site and the
backward() call as labels.

**Minimal example.**

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)     # sigmoid saves its output y
    y[0] = 0.0               # AD101: modifies y in place (version 0 -> 1)
    y.sum().backward()       # RuntimeError

Note that `y = x * x; y[0] = 0.0` does NOT fail: mul saves its inputs, not its output.

**The fix.** Write out of place so the saved value stays intact:
`y = y.index_fill(0, torch.tensor([0]), 0.0)`, `y = torch.where(mask, v, y)`,
`y = y.slice_scatter(v, dim=1, start=1, end=3)`, `out = out + residual`,
`h = h.mul(s)`, `nn.ReLU(inplace=False)`. If you need the write, clone first:
`y = y.clone(); y[0] = 0.0`.
""")

LEAF_INPLACE = _code(
    "AD102",
    "a leaf tensor that requires grad was modified in place",
    """\
**What it means.** A leaf is a tensor you created (`torch.randn(..., requires_grad=True)`,
an `nn.Parameter`). Its `.grad` is the gradient with respect to its value, so PyTorch
refuses in-place writes to it (or to a view of it) while recording:
"a leaf Variable that requires grad is being used in an in-place operation".

**Minimal example.**

    w = torch.zeros(3, requires_grad=True)
    w[0] = 1.0           # AD102
    w -= 0.1 * w.grad    # AD102 (a manual SGD step)

**The fix.** Initialisation and manual parameter updates must not be recorded:

    with torch.no_grad():
        w[0] = 1.0

If the result should be part of the graph, compute a new tensor instead
(`w2 = w.index_fill(0, torch.tensor([0]), 1.0)`, or `w2 = w.clone(); w2[0] = v`); it is then
no longer a leaf. Which one is meant, the written line alone does not say when the value written
has grad history (`w[:] = W`): autograd-doctor writes into a copy when an optimizer in the
program trains what the value comes from (no_grad would stop it training), keeps no_grad when
an optimizer exists and trains none of it, and otherwise offers both, each with its condition.
""")

OPTIMIZER_MODIFIED_SAVED = _code(
    "AD103",
    "optimizer.step() modified a parameter that a graph still needed for backward()",
    """\
**What it means.** `optimizer.step()` updates parameters in place. Layers such as
`nn.Linear` save their weight for backward. If a graph built before `step()` is
back-propagated after it (GAN generator loss through the discriminator, actor-critic
losses sharing a network, `backward(retain_graph=True)` then `step()` then another
`backward()`), the saved weight has changed and backward fails.

**Minimal example.**

    out = D(G(z))
    d_loss = out.mean(); d_loss.backward(retain_graph=True)
    opt_D.step()                   # AD103: updates D's weights in place
    g_loss = -out.mean(); g_loss.backward()   # needs D's old weights

**The fix.** It depends on which weights the later loss is meant to go through, which
no run-time fact decides, so the report offers both changes it can write, unverified:

- the weights its forward pass used: do the later loss's update (its `zero_grad()`,
  `backward()` and `step()`) before the other one, which keeps every value computed
  where the two losses share no graph; or call `step()` after the later backward(),
  which then also applies the later loss's gradients to the stepped model (the report
  says so: in a GAN it would train D on G's loss);
- the updated weights: compute the forward pass again after `step()` (`out = D(G(z))`
  before the generator loss, the order of the PyTorch DCGAN example).

Or `detach()` where the other network should not receive gradients.

In a loop whose `backward(retain_graph=True)` keeps each iteration's graph, a state carried into
the next iteration (an RNN's hidden state `h = rnn(x, h)`, or an attribute such as `self.mean`
that a method refreshes from this iteration's features) makes the next backward() go on into the
older graph, at weights `step()` has changed since. The report names that backward() and where
the state is stored; the help detaches the state right after backward() and drops
`retain_graph=True` (truncated backpropagation, the other reading of the program: unverified).
""",
    heading="optimizer.step() modified a parameter that a graph still needed",
    example_setup=(
        "G = nn.Linear(2, 4)\n"
        "D = nn.Linear(4, 1)\n"
        "z = torch.randn(3, 2)\n"
        "opt_D = torch.optim.SGD(D.parameters(), lr=0.1)\n"
    ))

MULTI_OUTPUT_VIEW_INPLACE = _code(
    "AD104",
    "an output of chunk/split/unbind was modified in place",
    """\
**What it means.** `chunk`, `split`, `unbind` (and other functions returning several
views) return views of one tensor. While autograd records, PyTorch forbids in-place
writes to them ("Output 0 of SplitBackward0 is a view and is being modified inplace.
This view is the output of a function that returns multiple views"), because it
cannot rewrite the graph of the sibling views.

**Minimal example.**

    h = x * 2
    a, b = h.chunk(2)
    a.mul_(2)          # AD104

**The fix.** Compute out of place (`a = a.mul(2)`), or, if the write must reach `h`,
build `h` from the pieces: `h = torch.cat([a * 2, b])`. Cloning the piece first
(`a = a.clone()`) also works when `h` itself need not change.
""",
    example_setup="x = torch.randn(4, requires_grad=True)\n")

VIEW_MODE_INPLACE = _code(
    "AD105",
    "a view made under no_grad or inference_mode was modified in place with grad mode on",
    """\
**What it means.** A view (slice, `view`, indexing) was made while gradients were off (`torch.no_grad()`
or `torch.inference_mode()`), then written in place with gradients on. PyTorch cannot tell
whether the write should be recorded, and refuses: "A view was created in no_grad mode and is
being modified inplace with grad mode enabled". The doctor points at the write, the view and
the block that made it.

**Minimal example.**

    h = x * 2
    with torch.no_grad():
        first = h[:2]          # a view made with gradients off
    first.mul_(x[:2])          # AD105

**The fix.** Make the view and the write in the same mode: move `first = h[:2]` out of the block if the
write should be recorded, or do the write inside the block if it should not.
""",
    example_setup="x = torch.randn(4, requires_grad=True)\n")

VIEW_MODE_BASE_MODIFIED = _code(
    "AD106",
    "a view made under no_grad was used after its base was modified in place",
    """\
**What it means.** A view made under `torch.no_grad()` (or inference mode) shares memory with its base.
The base was then written in place with gradients on, and the view was used afterwards:
"A view was created in no_grad mode and its base or another view of its base has been
modified inplace with grad mode enabled". PyTorch raises where the view is used; the doctor
points at the write to the base, with the view and the block as labels.

**Minimal example.**

    with torch.no_grad():
        first = h[:2]
    h.mul_(x)                      # AD106: writes first's base
    loss = first.sum() + h.sum()   # RuntimeError here

**The fix.** Make the view after the write, outside the no_grad block, so it carries the new values with
their history.
""",
    example_setup=(
        "x = torch.randn(4, requires_grad=True)\n"
        "h = x * 2\n"
    ))

CUSTOM_FUNCTION_VIEW_INPLACE = _code(
    "AD107",
    "a view returned by a custom autograd.Function was modified in place",
    """\
**What it means.** A custom `torch.autograd.Function` returned a view of its input (or the input itself),
and that output was written in place. Autograd would have to replace your backward to handle
the write, so it refuses: "Output 0 of MyFn is a view and is being modified inplace. This
view was created inside a custom Function".

**Minimal example.**

    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)
        ...
    y = Identity.apply(h)
    y.mul_(2)                 # AD107

**The fix.** Clone the output before writing: `y = Identity.apply(h).clone()`, or return a new tensor
from forward (`x.clone()`).
""",
    example_setup="h = torch.randn(3, requires_grad=True) * 1\n")

DETACH_VIEW_INPLACE = _code(
    "AD108",
    "detach_() was called on a view",
    """\
**What it means.** `t.detach_()` on a view: the view shares its base's graph, so detaching it in place
would cut the base's graph too. PyTorch: "Can't detach views in-place. Use detach() instead".

**Minimal example.**

    row = h[0]
    row.detach_()             # AD108

**The fix.** Detach out of place: `row = row.detach()`.
""",
    example_setup="h = torch.randn(2, 3, requires_grad=True) * 2\n")

INFERENCE_TENSOR_SAVED = _code(
    "AD109",
    "a tensor made under inference_mode was used in a computation autograd records",
    """\
**What it means.** A tensor created under `torch.inference_mode()` was used in a computation autograd
records, which had to save it: "Inference tensors cannot be saved for backward". The block or
decorator that made the tensor is often far away (an evaluation helper, a feature cache, a
library); the doctor remembers where inference mode was entered and points there.

**Minimal example.**

    with torch.inference_mode():
        features = backbone(x)          # AD109 points here
    loss = head(features).pow(2).mean() # RuntimeError here

**The fix.** Use `torch.no_grad()` instead of `torch.inference_mode()` for tensors used in training
later (same speed for most models), or make a normal copy where it is used:
`features = features.clone()`.
""",
    example_setup=(
        "backbone = nn.Linear(3, 3)\n"
        "head = nn.Linear(3, 1)\n"
        "x = torch.randn(2, 3)\n"
    ))

INFERENCE_TENSOR_INPLACE = _code(
    "AD110",
    "a tensor made under inference_mode was modified in place outside it",
    """\
**What it means.** A tensor created under `torch.inference_mode()` was written in place outside it:
"Inplace update to inference tensor outside InferenceMode is not allowed".

**Minimal example.**

    with torch.inference_mode():
        running = torch.zeros(3)
    running += update         # AD110

**The fix.** Write out of place (`running = running + update`), clone it first, or create it under
`torch.no_grad()` instead.
""",
    example_setup="update = torch.ones(3)\n")

INFERENCE_TENSOR_REQUIRES_GRAD = _code(
    "AD111",
    "requires_grad was set on a tensor made under inference_mode",
    """\
**What it means.** `requires_grad` was set on a tensor created under `torch.inference_mode()`:
"Setting requires_grad=True on inference tensor outside InferenceMode is not allowed".

**Minimal example.**

    with torch.inference_mode():
        weights = torch.ones(3)
    weights.requires_grad_()  # AD111

**The fix.** Use a normal copy: `weights = weights.clone().requires_grad_()`, or create it under
`torch.no_grad()`.
""")

BACKWARD_NON_SCALAR = _code(
    "AD112",
    "backward() was called on a tensor with more than one element",
    """\
**What it means.** `backward()` without an argument computes the gradient of a single number. Called on a
tensor with several elements it fails: "grad can be implicitly created only for scalar
outputs".

**Minimal example.**

    y = x * x
    y.backward()              # AD112

**The fix.** Reduce to the loss you minimise: `y.sum().backward()` (or `.mean()`, which scales the
gradients), or pass the upstream gradient: `y.backward(torch.ones_like(y))`. The same holds for
`torch.autograd.grad(y, x)` (`grad_outputs=torch.ones_like(y)`). When `y` holds one loss per
element (made by a loss function with `reduction="none"`), autograd-doctor names both `.mean()`
(what the loss function does by default) and `.sum()` (which multiplies the gradients, and an SGD
step, by the number of elements) and does not choose: which one the training means, the program does
not show, unless it reduces that tensor itself after backward() (the number it reports).

`torch.func.grad(f)` needs the same of `f`: a function returning several numbers fails with
"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 1 dims".
autograd-doctor points at the function's return and does not choose between `.sum()` and `.mean()`
(the scale of the gradient returned is the result); `torch.func.jacrev(f)` gives one gradient per
element, and `vmap(grad(f))` one per example when `f` computes one example's loss.

A complex loss fails too ("only for real scalar outputs"): a loss must be real. Where the loss
squares a complex difference, `(z) ** 2` (complex) becomes `(z).abs() ** 2` (the squared error
`|z|^2`); otherwise choose the real quantity you minimise (`z.abs()`, `z.real`).
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

NUMPY_REQUIRES_GRAD = _code(
    "AD113",
    "numpy() was called on a tensor that requires grad",
    """\
**What it means.** `t.numpy()` on a tensor that requires grad: a NumPy array has no graph, and PyTorch will
not drop the gradient silently: "Can't call numpy() on Tensor that requires grad".

**Minimal example.**

    values = torch.sigmoid(x).numpy()    # AD113

**The fix.** `t.detach().numpy()` (add `.cpu()` for GPU tensors).
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

INTEGER_REQUIRES_GRAD = _code(
    "AD114",
    "requires_grad was set on an integer tensor",
    """\
**What it means.** Only floating-point and complex tensors have gradients. `requires_grad=True` on an
integer tensor (from integer literals, `arange`, labels) fails: "only Tensors of floating
point dtype can require gradients".

**Minimal example.**

    w = torch.tensor([1, 2, 3], requires_grad=True)   # AD114

**The fix.** Create it as floating point: `torch.tensor([1, 2, 3], dtype=torch.float32,
requires_grad=True)`; for indices and labels, do not ask for a gradient.
""")

NON_LEAF_REQUIRES_GRAD_FLAG = _code(
    "AD115",
    "requires_grad was changed on a tensor that is not a leaf",
    """\
**What it means.** The `requires_grad` flag of a computed tensor follows from its inputs and cannot be
switched off in place: "you can only change requires_grad flags of leaf variables".

**Minimal example.**

    y = x * 2
    y.requires_grad_(False)   # AD115

**The fix.** Use a detached tensor from there on: `y = y.detach()`.
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

HOOK_WITHOUT_GRAD = _code(
    "AD116",
    "register_hook() or retain_grad() on a tensor that does not require grad",
    """\
**What it means.** `register_hook()` or `retain_grad()` on a tensor that does not require grad: no gradient
will ever reach it. Usually its inputs do not require grad, or it was computed under
`torch.no_grad()` or after `detach()`.

**Minimal example.**

    x = torch.randn(3)        # no requires_grad
    y = x * 2
    y.register_hook(print)    # AD116

**The fix.** Make the inputs require grad if you want gradients there; if the same code also runs in
evaluation, guard it: `if y.requires_grad: y.register_hook(...)`.
""")

OUT_WITH_GRAD = _code(
    "AD117",
    "out= was used with an argument that requires grad",
    """\
**What it means.** Functions called with `out=` are not differentiable. With an argument that requires grad
PyTorch refuses: "mul(): functions with out=... arguments don't support automatic
differentiation, but one of the arguments requires grad".

**Minimal example.**

    result = torch.empty(3)
    torch.mul(x, 2, out=result)   # AD117

**The fix.** Assign the result instead: `result = torch.mul(x, 2)`.
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

NAN_IN_BACKWARD = _code(
    "AD118",
    "backward produced NaN (anomaly mode)",
    """\
**What it means.** Under `torch.autograd.detect_anomaly()`, a backward function produced NaN: "Function
'PowBackward0' returned nan values in its 0th output". The cause is almost always an op
whose derivative is infinite at the value it saw (sqrt or log at 0, division by 0, the norm
of a zero vector); infinity times a zero gradient gives NaN, often in the op *before* the
singular one. The doctor reads the forward line anomaly mode recorded on that node.

**Minimal example.**

    with torch.autograd.detect_anomaly():
        distance = ((a - b) ** 2).sum(1).sqrt()   # AD118: a row of a equals b
        distance.sum().backward()

**The fix.** Keep the singular op's input away from 0: `.clamp_min(1e-12).sqrt()`,
`torch.log(p.clamp_min(1e-12))`, `a / (b + 1e-12)`, or mask those elements with
`torch.where` first.
""",
    example_setup=(
        "a = torch.randn(2, 3, requires_grad=True)\n"
        "b = a[0].detach().clone()\n"
    ))

NON_LEAF_OPTIMIZED = _code(
    "AD119",
    "the optimizer was given a tensor that is not a leaf",
    """\
**What it means.** Optimizers update leaves (tensors you created). A tensor computed from another
(`torch.randn(3, requires_grad=True) * 0.01`, `.to(device)` after `requires_grad=True`) is not
a leaf: "can't optimize a non-leaf Tensor". The doctor points at the line that made it.

**Minimal example.**

    w = torch.randn(3, requires_grad=True) * 0.01   # AD119 points here
    opt = torch.optim.SGD([w], lr=0.1)

**The fix.** Compute the value first, then make it a leaf: `w = (torch.randn(3) * 0.01).requires_grad_()`,
or wrap it in `nn.Parameter(...)`.
""")

FUNCTION_GRADIENT_MISMATCH = _code(
    "AD120",
    "a custom autograd.Function's backward returned the wrong number, shape or device of gradients",
    """\
**What it means.** A custom `autograd.Function`'s backward must return one gradient per input of forward
(after ctx), each of that input's shape and on that input's device. PyTorch reports "returned
an incorrect number of gradients (expected 2, got 1)" or "returned an invalid gradient at index
0" (a wrong shape, or "expected device cuda:0 but got cpu") without showing your backward; the
doctor points at its return statement.

**Minimal example.**

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor): ...
        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor       # AD120: 1 value for 2 inputs

**The fix.** Return a value per input, `None` for inputs that need no gradient
(`return grad * ctx.factor, None`), each with its input's shape, made on its input's device
(`torch.zeros(n, device=grad.device)`, not `torch.zeros(n)`).
""",
    example_not_runnable="its forward is elided (`...`)")

MARK_DIRTY_NOT_RETURNED = _code(
    "AD121",
    "a tensor passed to ctx.mark_dirty() was not returned by forward",
    """\
**What it means.** A Function that modifies an input in place marks it with `ctx.mark_dirty(x)` and must
return that input: "Some elements marked as dirty during the forward method were not
returned as output".

**Minimal example.**

    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x * 1            # AD121

**The fix.** Return the modified input itself: `return x`.
""",
    example_around=(
        "class AddOne(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "{fragment}\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return grad\n"
        "AddOne.apply(torch.randn(3, requires_grad=True) * 1)\n"
    ))

SAVE_FOR_BACKWARD_NON_TENSOR = _code(
    "AD122",
    "ctx.save_for_backward() was given something that is not a tensor",
    """\
**What it means.** `ctx.save_for_backward()` accepts tensors (and None) only: "save_for_backward can only
save variables, but argument 1 is of type int". PyTorch checks after forward returns, so its
traceback ends at `.apply()`; the doctor points at the call inside forward.

**Minimal example.**

    def forward(ctx, x, exponent):
        ctx.save_for_backward(x, exponent)   # AD122: exponent is an int

**The fix.** Save tensors only; keep other values as ctx attributes: `ctx.save_for_backward(x)`,
`ctx.exponent = exponent`, and read `ctx.exponent` in backward. When the value is a Python number
that backward only computes with (`x ** (exponent - 1)`, `grad * exponent`), the doctor's change is
one line: `torch.tensor(exponent)` (float64 for a float), a 0-dim tensor giving the same values.
""",
    example_around=(
        "class Power(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "{fragment}\n"
        "        return x ** exponent\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        return grad, None\n"
        "Power.apply(torch.randn(3, requires_grad=True), 2)\n"
    ))

GRAD_OUTPUTS_SHAPE = _code(
    "AD123",
    "the gradient given for an output has the wrong shape",
    """\
**What it means.** The gradient given for an output (`grad_outputs=` of `torch.autograd.grad`, `gradient=`
of `backward`) must have that output's shape: "Mismatch in shape: grad_output[0] has a shape
of torch.Size([3]) and output[0] has a shape of torch.Size([])".

**Minimal example.**

    y = (x * 2).sum()
    torch.autograd.grad(y, x, grad_outputs=torch.ones(3))   # AD123

**The fix.** Give a gradient of the output's own shape (`torch.ones_like(y)`), or nothing for a scalar
output. A gradient that differs only by dimensions of size 1 (`[N]` for an `[N, 1]` output) pairs its
elements with the output's in order: `.reshape_as(output)`.
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

EXPANDED_INPLACE = _code(
    "AD124",
    "an in-place write into an expanded (broadcast) tensor",
    """\
**What it means.** `expand()` and `broadcast_to()` return views where many elements share one memory cell.
Writing into such a view in place fails: "unsupported operation: more than one element of
the written-to tensor refers to a single memory location". The doctor points at the line
that made the expanded view.

**Minimal example.**

    bias = torch.zeros(1, 3).expand(4, 3)   # AD124 points here
    bias.add_(update)

**The fix.** Give every element its own memory before writing: `.expand(4, 3).clone()` (or
`.repeat(4, 1)`), or write out of place.
""",
    example_setup="update = torch.ones(4, 3)\n")

CHECKPOINT_RECOMPUTE_MISMATCH = _code(
    "AD125",
    "a checkpointed function did something different when recomputed",
    """\
**What it means.** `torch.utils.checkpoint` discards the function's intermediate tensors and runs it again
during backward. If the second run does something different (a counter, a global flag, a
branch on state the first run changed), PyTorch raises a `CheckpointError` ("A different
number of tensors was saved during the original forward and recomputation"). The doctor
points at the checkpointed function and its branches.

**Minimal example.**

    def block(x):
        calls.append(1)
        if len(calls) == 1:       # different on the recomputation
            return x.sin() * x.sin()
        return x.sin()
    y = checkpoint(block, x, use_reentrant=False)
    y.sum().backward()            # AD125

**The fix.** Make the checkpointed function deterministic in what it computes: no dependence on state
it changes itself; keep `preserve_rng_state=True` (the default) for random ops.
""",
    example_setup=(
        "from torch.utils.checkpoint import checkpoint\n"
        "calls = []\n"
        "x = torch.randn(3, requires_grad=True)\n"
    ))

CHECKPOINT_REENTRANT_GRAD = _code(
    "AD126",
    "torch.autograd.grad() through a reentrant checkpoint",
    """\
**What it means.** The reentrant checkpoint (`use_reentrant=True`) runs a nested backward that only works
with a plain `.backward()`: "When use_reentrant=True, torch.utils.checkpoint is incompatible
with .grad() or passing an `inputs` parameter to .backward()". The doctor points at the
checkpoint call.

**Minimal example.**

    y = checkpoint(torch.sin, x, use_reentrant=True)   # AD126 points here
    torch.autograd.grad(y.sum(), x)

**The fix.** Pass `use_reentrant=False`.
""",
    example_setup=(
        "from torch.utils.checkpoint import checkpoint\n"
        "x = torch.randn(3, requires_grad=True)\n"
    ))

DDP_UNUSED_PARAMETERS = _code(
    "AD127",
    "DistributedDataParallel: some parameters got no gradient in the previous iteration",
    """\
**What it means.** DistributedDataParallel reduces every parameter's gradient across ranks
during backward and waits for all of them before the next forward pass. If the loss did not
depend on some parameters in an iteration (a branch in forward that skips a head, an
auxiliary output not added to the loss), the next forward fails: "Expected to have finished
reduction in the prior iteration before starting a new one ... Parameter indices which did
not receive grad for rank 0: 2 3". The doctor turns the indices into parameter names and
shows the forward branches that use them.

**Minimal example.**

    def forward(self, x, use_aux):
        h = self.body(x)
        if use_aux:                       # aux_head is used only on some steps
            return self.aux_head(h)
        return self.head(h)
    model = DistributedDataParallel(Net())   # AD127 points here

**The fix.** `DistributedDataParallel(net, find_unused_parameters=True)` when parameters are
unused on purpose; otherwise use them in every forward pass, or freeze the ones that never
train.
""",
    example_not_runnable="needs a DistributedDataParallel process group (tests/errors/test_ddp.py runs one)")

OPTIMIZER_PARAMS_NOT_ITERABLE = _code(
    "AD128",
    "the optimizer was given a tensor instead of an iterable of tensors",
    """\
**What it means.** Optimizers take an iterable of parameters (or of parameter-group dicts).
Given one tensor, PyTorch raises "params argument given to the optimizer should be an
iterable of Tensors or dicts, but got torch.FloatTensor".

**Minimal example.**

    opt = torch.optim.SGD(model.weight, lr=0.1)     # AD128

**The fix.** Pass a list: `torch.optim.SGD([model.weight], lr=0.1)`, or
`model.parameters()`.
""",
    example_setup="model = nn.Linear(3, 1)\n")

OPTIMIZER_EMPTY_PARAMETERS = _code(
    "AD129",
    "the optimizer was given no parameters",
    """\
**What it means.** The iterable given to the optimizer yielded nothing: "optimizer got an
empty parameter list". The usual cause is a `model.parameters()` generator stored in a
variable and used once before (counting parameters, a first optimizer): a generator can be
iterated only once. Other causes: a filter such as `if p.requires_grad` with every parameter
frozen, layers kept in a plain Python list instead of `nn.ModuleList`.

**Minimal example.**

    params = model.parameters()
    print(sum(p.numel() for p in params))          # uses the generator up
    opt = torch.optim.SGD(params, lr=0.1)          # AD129

**The fix.** `params = list(model.parameters())`, or call `model.parameters()` again where
it is needed.
""",
    example_setup="model = nn.Linear(3, 1)\n")

NEGATIVE_SLOPE_INPLACE = _code(
    "AD130",
    "LeakyReLU or ELU with a negative slope was computed in place",
    """\
**What it means.** The backward of an in-place LeakyReLU (or ELU) needs to know the sign of
the input, which the in-place forward overwrote; with a negative slope the output's sign no
longer tells. PyTorch fails in backward, far from the cause: "In-place leakyReLu backward
calculation is triggered with a negative slope which is not supported". The doctor finds
the `inplace=True` in your code (often the model's definition, not in the traceback).

**Minimal example.**

    act = nn.LeakyReLU(-0.1, inplace=True)    # AD130 points here
    act(x * 2).sum().backward()

**The fix.** `inplace=False` (the default).
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

GRAD_ASSIGNED_SHAPE = _code(
    "AD131",
    "a gradient of the wrong size was assigned to .grad",
    """\
**What it means.** A tensor's `.grad` always has the tensor's shape: "attempting to assign a
gradient of size '[2]' to a tensor of size '[3]'".

**Minimal example.**

    w = torch.randn(3, requires_grad=True)
    w.grad = torch.zeros(2)                   # AD131

**The fix.** Build the gradient with the tensor's shape (`torch.zeros_like(w)`), or assign it
to the tensor it belongs to.
""")

OPTIMIZER_OVERLAPPING_GROUPS = _code(
    "AD132",
    "the optimizer's parameter groups share parameters",
    """\
**What it means.** Each parameter can be in one parameter group only (a group has one learning
rate, one weight decay). Listing `model.parameters()` in one group and `model.head.parameters()`
in another puts the head's parameters in both: "some parameters appear in more than one
parameter group". The doctor names the shared parameters and the two groups.

**Minimal example.**

    opt = torch.optim.SGD([{"params": model.parameters()},                  # AD132
                           {"params": model.head.parameters(), "lr": 0.01}], lr=0.1)

**The fix.** Make the groups disjoint: leave the head out of the general group,
`[p for name, p in model.named_parameters() if not name.startswith("head.")]`.
""",
    example_setup=(
        "model = nn.Module()\n"
        "model.body = nn.Linear(3, 3)\n"
        "model.head = nn.Linear(3, 1)\n"
    ))

RESIZE_WITH_GRAD = _code(
    "AD133",
    "resize_() on a tensor that requires grad",
    """\
**What it means.** `resize_()` changes a tensor's number of elements in place, leaving new
elements uninitialised; autograd cannot give that a gradient, so PyTorch refuses: "cannot
resize variables that require grad" (also for `resize_as_()`).

**Minimal example.**

    h = x * 2
    h.resize_(2, 3)            # AD133

**The fix.** Change the shape out of place: `h = h.reshape(2, 3)` when the number of elements
stays the same; otherwise build the new tensor from the old one (`h.flatten()[:n]`, or
`torch.cat` with `h.new_zeros(...)`). For a leaf (a parameter), make a new leaf:
`w = w.detach().reshape(...).requires_grad_()`, and register it again where the old one was used.
""",
    example_setup="x = torch.randn(6, requires_grad=True)\n")

APPLY_WITH_GRAD = _code(
    "AD134",
    "apply_() or map_() on a tensor that requires grad",
    """\
**What it means.** `apply_()`, `map_()` and `map2_()` run a Python function on each element in
place. Autograd cannot differentiate a Python function, so PyTorch refuses them on a tensor
that requires grad: "Can't call apply_() on Variable that requires grad".

**Minimal example.**

    w = torch.tensor([0.25, -1.5, 2.0], requires_grad=True)
    w.apply_(lambda v: max(v, 0.0))          # AD134

**The fix.** For a leaf (initialising or editing a parameter's values), do it on the detached
tensor, which shares its memory: `w.detach().apply_(f)`. For a computed tensor whose gradient
matters, write `f` with tensor operations (`torch.clamp`, `torch.where`), out of place.
""")

GRAD_EMPTY_INPUTS = _code(
    "AD135",
    "torch.autograd.grad() or backward(inputs=...) was given no inputs",
    """\
**What it means.** `torch.autograd.grad(loss, inputs)` and `loss.backward(inputs=...)` were given
an empty `inputs`: "`inputs` argument to `grad()` cannot be empty" (the engine's own wording is
"grad requires non-empty inputs"). The usual cause is a `model.parameters()` generator stored in
a variable and already used once (by the optimizer), or a filter that matched no parameter.
The doctor points at where the empty inputs were made.

**Minimal example.**

    params = model.parameters()
    opt = torch.optim.SGD(params, lr=0.1)          # uses the generator up
    torch.autograd.grad(loss, params)              # AD135

**The fix.** `params = list(model.parameters())`, or fix the filter that selects the inputs.
""",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "loss = model(torch.randn(2, 3)).sum()\n"
    ))

CHECKPOINT_SAVED_UNPACKED_TWICE = _code(
    "AD136",
    "ctx.saved_tensors was read twice under torch.utils.checkpoint",
    """\
**What it means.** Under the non-reentrant `torch.utils.checkpoint`, each saved tensor is
recomputed when backward unpacks it, and can be unpacked once: "Unpack is being triggered for
a tensor that was already unpacked once". A custom `autograd.Function` whose backward reads
`ctx.saved_tensors` twice fails there (without checkpoint it works).

**Minimal example.**

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * ctx.saved_tensors[0] * grad     # AD136: second read

**The fix.** Read `ctx.saved_tensors` once, at the top of backward, and use the variables.
""",
    example_around=(
        "from torch.utils.checkpoint import checkpoint\n"
        "class Square(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x * x\n"
        "    @staticmethod\n"
        "{fragment}\n"
        "x = torch.randn(3, requires_grad=True)\n"
        "checkpoint(Square.apply, x, use_reentrant=False).sum().backward()\n"
    ))

MARK_DIRTY_LEAF = _code(
    "AD137",
    "a custom autograd.Function modified a leaf that requires grad in place (ctx.mark_dirty)",
    """\
**What it means.** A custom `torch.autograd.Function` whose forward writes into its input and says so
with `ctx.mark_dirty(x)` was applied to a leaf that requires grad (a parameter, a tensor made
with `requires_grad=True`). A leaf's value is what its `.grad` refers to, so it may not be
changed by a recorded operation: "a leaf Variable that requires grad has been used in an
in-place operation". PyTorch raises when `.apply()` returns; the line to change is that call.

**Minimal example.**

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x
        ...
    w = torch.ones(3, requires_grad=True)
    y = Double.apply(w)       # AD137

**The fix.** Give the Function a copy that is not a leaf: `y = Double.apply(w.clone())`. The gradient
still reaches `w` through the clone, and `w` keeps its value. If the Function must not modify
its input, write forward out of place and drop `mark_dirty`.
""")

MULTI_OUTPUT_BASE_MODIFIED = _code(
    "AD138",
    "the base of chunk/split/unbind outputs was modified in place",
    """\
**What it means.** `chunk`, `split`, `unbind` and other functions returning several views share one graph
node. When their base (or one sibling) is written in place after the views were made, autograd
cannot rebuild the graph of the other views, and it refuses to use them: "Output 0 of Split is a
view and its base or another view of its base has been modified inplace. This view is the output
of a function that returns multiple views". PyTorch raises where a view is used next (often far
below); the line to change is the write into the base.

**Minimal example.**

    h = x * 2
    first, second = h.split(2)
    h.mul_(3)                       # AD138
    loss = (first * second).sum()   # RuntimeError here

**The fix.** Write the base out of place (`h = h.mul(3)`), so the pieces keep the values they had when
they were made, or split after the write if the pieces should see it.
""",
    example_setup="x = torch.randn(4, requires_grad=True)\n")

SAVED_DETACHED_INPLACE = _code(
    "AD139",
    "detach_() was called on a tensor that autograd saved for backward()",
    """\
**What it means.** `t.detach_()` turns `t` itself into a tensor without history. If autograd saved `t`
for a backward formula (`exp`, `sigmoid`, `tanh` save their output; `mul` its inputs), the
saved tensor is gone from the graph, and backward fails: "Trying to use a saved tensor that has
been detached in-place, i.e. with .detach_()". PyTorch raises in backward(); the line to change
is the `detach_()` call.

**Minimal example.**

    h = x.exp()                # exp saves its output h
    loss = (h * x).sum()
    h.detach_()                # AD139
    loss.backward()            # RuntimeError here

**The fix.** Detach out of place: `h = h.detach()`. The name `h` then refers to a detached copy that
shares the memory, and the graph keeps the tensor it saved.
""",
    example_setup="x = torch.randn(3, requires_grad=True)\n")

NON_DIFFERENTIABLE_ARGUMENT = _code(
    "AD140",
    "an argument PyTorch cannot differentiate requires grad",
    """\
**What it means.** Some arguments of some operations have no derivative formula in PyTorch: the `weight`
of `binary_cross_entropy`, `nll_loss` and `cross_entropy`, the `pos_weight` of
`binary_cross_entropy_with_logits`, the `target` of `soft_margin_loss`, and others. When such
an argument requires grad (it was computed from parameters), the forward call fails: "The
function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'. This
input cannot have requires_grad True." Older versions say "the derivative for 'target' is not
implemented".

**Minimal example.**

    weights = torch.sigmoid(weigher(x))               # requires grad
    loss = F.binary_cross_entropy(p, y, weight=weights)   # AD140

**The fix.** Pass a detached copy (`weight=weights.detach()`): the loss then treats the weights as
constants, which is all the operation can do. If the weights must be learned, write the loss
out yourself (`-(weights * (y * p.log() + (1 - y) * (1 - p).log())).mean()`), which autograd
can differentiate with respect to every term. When the weights of a binary cross-entropy come
from parameters an optimizer trains, autograd-doctor offers that first, as the unreduced loss
times the weights (`(F.binary_cross_entropy(p, y, reduction='none') * weights).mean()`, the same
value).
""",
    example_setup=(
        "weigher = nn.Linear(3, 1)\n"
        "x = torch.randn(4, 3)\n"
        "p = torch.sigmoid(torch.randn(4, 1, requires_grad=True))\n"
        "y = torch.rand(4, 1)\n"
    ))

AUTOGRAD_INSIDE_TRANSFORM = _code(
    "AD141",
    "backward(), torch.autograd.grad() or requires_grad_() inside a torch.func transform",
    """\
**What it means.** Inside a function transformed by `torch.func` (`vmap`, `grad`, `vjp`, `jacrev`,
`functional_call` under them), tensors are wrapped per transform level; the tape-based autograd
API (`loss.backward()`, `torch.autograd.grad`, `x.requires_grad_()`) does not see through those
wrappers, even when the tensor given to the transform requires grad. PyTorch raises
"backward() called inside a functorch transform", "You are attempting to call
Tensor.requires_grad_() ... inside of a function being transformed by a functorch transform",
or, for `torch.autograd.grad` under `vmap`, "element 0 of tensors does not require grad and does
not have a grad_fn".

**Minimal example.**

    def per_sample_grad(sample):
        loss = (sample ** 2).sum()
        loss.backward()                 # AD141
        return sample.grad
    grads = vmap(per_sample_grad)(x)

**The fix.** Let torch.func compute the gradient: make the function return the loss and transform it with
`torch.func.grad` (`vmap(grad(loss_fn))(x)` for per-sample gradients), or call `backward()`
outside the transform.
""",
    example_setup=(
        "from torch.func import vmap\n"
        "x = torch.randn(4, 3)\n"
    ))

SAVED_TENSORS_UNPACK_COUNT = _code(
    "AD142",
    "a custom Function's backward unpacks a different number of tensors than forward saved",
    """\
**What it means.** `ctx.saved_tensors` holds exactly the tensors forward passed to
`ctx.save_for_backward(...)`, in that order. When backward unpacks more names than were saved
(or fewer), Python raises "not enough values to unpack (expected 3, got 2)" (or "too many values
to unpack") inside backward, and PyTorch's traceback does not show the `save_for_backward` line
that decides the count.

**Minimal example.**

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w
        @staticmethod
        def backward(ctx, grad):
            x, w, out = ctx.saved_tensors      # AD142: forward saved 2 tensors
            return grad * w, grad * x

    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    Scale.apply(x, w).sum().backward()

**The fix.** Unpack the names forward saved, in the same order (`x, w = ctx.saved_tensors`). If
backward needs another tensor, save it in forward too (`ctx.save_for_backward(x, w, out)`).
""",
    )

TRACE_CONSTANT_REQUIRES_GRAD = _code(
    "AD143",
    "torch.jit.trace met a tensor that requires grad but is neither an input nor a parameter",
    """\
**What it means.** `torch.jit.trace` records every tensor the traced code reads that is not one of
its inputs, a parameter or a buffer as a constant of the graph. A constant cannot carry a gradient,
so a tensor that requires grad fails: "Cannot insert a Tensor that requires grad as a constant.
Consider making it a parameter or input, or detaching the gradient". The usual cause is a
trainable tensor stored on a module as a plain attribute (`self.scale = torch.ones(3,
requires_grad=True)`): the module does not know it, so neither `parameters()`, the optimizer,
`state_dict()` nor the tracer see it as a parameter.

**Minimal example.**

    class Scaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(3, requires_grad=True)    # AD143: a plain attribute
        def forward(self, x):
            return x * self.scale
    torch.jit.trace(Scaler(), torch.randn(2, 3))

**The fix.** Register it as a parameter: `self.scale = nn.Parameter(torch.ones(3))`. It then
trains with the module (it is in `parameters()`), is saved in its `state_dict()`, and the trace
keeps it as a parameter. A tensor that is not trained is detached (or registered as a buffer); a
global tensor becomes an input of the traced function.
""")

VMAP_WRITE_INTO_UNBATCHED = _code(
    "AD144",
    "under vmap, a batched value is written in place into a tensor that has no batch dimension",
    """\
**What it means.** `torch.func.vmap` runs the function on one example at a time, but every tensor
computed from the function's inputs carries the whole batch along (as a hidden batch dimension).
A tensor the function makes from a size (`torch.zeros(n)`, `torch.ones`, `torch.empty`,
`torch.full`), or one made outside it, has no batch dimension: it holds one example's worth of
elements. Writing a batched value into it in place (`buffer[i] = x * 2`, `buffer += x`) would need
room for the whole batch, so PyTorch raises "vmap: inplace arithmetic(self, *extra_args) is not
possible because there exists a Tensor `other` in extra_args that has more elements than `self`".
The same code runs without vmap, which is why it surprises. `jacrev`/`jacfwd` under vmap hit it too.

**Minimal example.**

    def residual(x):
        out = torch.zeros(3)           # AD144: made from a size, not batched
        out[:] = x * 2
        return out
    residuals = vmap(residual)(torch.randn(4, 3))

**The fix.** Make the tensor from one of the function's inputs: `out = x.new_zeros(3)` (or
`torch.zeros_like(x)`) holds the same values and gets `x`'s batch dimension under vmap. Or build
the result out of place (`torch.cat`/`torch.stack` of the pieces).
""",
    example_setup="from torch.func import vmap\n")

VMAP_BATCH_DIMENSION_INDEXED = _code(
    "AD145",
    "under vmap, code written for a batch indexes the batch dimension, which the function does not see",
    """\
**What it means.** `torch.func.vmap` (and `vmap(grad(loss_fn))` for per-sample gradients) calls the
function with one example at a time: each input lacks the batch dimension. A model or loss written
for a batch (`x[:, 0]`, `x.size(1)`, `x.sum(dim=1)`) then indexes a dimension that is not there,
and PyTorch raises "too many indices for tensor of dimension 1" or "Dimension out of range" deep in
the model, far from the vmap call.

**Minimal example.**

    def loss_fn(w, x):
        h = x * w
        return h[:, 0].sum()             # written for a batch
    per_sample = vmap(grad(loss_fn), in_dims=(None, 0))(w, x)   # AD145

**The fix.** Give the function a batch of one: `x = x.unsqueeze(0)` at its start (the code sees
the shape it was written for, and the loss over one example is that example's loss), or write the
code for a single example (`h[0]` for `h[:, 0]`).
""",
    example_setup="from torch.func import grad, vmap\nw = torch.randn(3)\nx = torch.randn(4, 3)\n")

INFERENCE_TENSOR_VERSION = _code(
    "AD146",
    "the version counter of a tensor made under inference_mode was read",
    """\
**What it means.** `torch.inference_mode()` makes tensors without a version counter (that is part
of what makes it faster than `torch.no_grad()`). Code that reads a tensor's version to notice
in-place changes (`t._version`: caches, decoders, some libraries) then fails with "Inference
tensors do not track version counter", often inside a library, far from the `inference_mode`
block that made the tensor.

**Minimal example.**

    with torch.inference_mode():        # AD146: the tensor is made here
        labels = torch.arange(6)
    seen = labels._version

**The fix.** Use `torch.no_grad()` for that block: it also turns gradients off, and its tensors
are normal ones, with a version counter. Or, if `inference_mode` must stay, give the code a normal
copy (`labels = labels.clone()` outside the block).
""")

DIRTY_VIEW_SEVERAL_OUTPUTS = _code(
    "AD147",
    "a custom Function marks a view dirty and returns several tensors",
    """\
**What it means.** A custom `autograd.Function` that writes its input in place declares it with
`ctx.mark_dirty(x)`. When that input is a view of another tensor (a row, a slice), autograd has to
rewrite the view's history onto its base, which it can do only when the Function returns a single
tensor. With several outputs PyTorch raises "If your Function modifies inplace an input that is a
view of another Tensor, your Function cannot return more than one Tensor", at the `.apply(...)`
call, without saying which input is the view.

**Minimal example.**

    class ScaleAndTotal(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x.sum()
        @staticmethod
        def backward(ctx, grad_x, grad_total):
            return 2 * (grad_x + grad_total)

    row = torch.randn(2, 3, requires_grad=True).exp()[0]
    scaled, total = ScaleAndTotal.apply(row)          # AD147

**The fix.** Give the Function a tensor that is not a view (`row = ....clone()`) when nothing reads
the base afterwards, or return one tensor from it (split it into a Function that writes in place
and returns the input, and the other operations after it).
""")

UNSCALE_BEFORE_UPDATE = _code(
    "AD148",
    "GradScaler.unscale_() was called again before update(): once per step, after the last backward()",
    """\
**What it means.** With mixed precision, `scaler.scale(loss).backward()` leaves gradients
multiplied by the loss scale; `scaler.unscale_(optimizer)` divides them back (to clip them) and
may run only once per step: after it, the scaler refuses another `unscale_()` on that optimizer
until `scaler.update()`, which follows `scaler.step(optimizer)`. With gradient accumulation,
step() and update() run every N micro-batches, so an `unscale_()` (and the clipping after it)
written in every iteration runs a second time before the first update(), and PyTorch raises
"unscale_() has already been called on this optimizer since the last update()" at that line,
without saying that the step runs less often. autograd-doctor names the `scaler.step()` that
runs only every N iterations and moves the `unscale_()` and its clipping there.

**Minimal example.**

    for i, (x, y) in enumerate(batches):
        scaler.scale(F.mse_loss(model(x), y) / 2).backward()
        scaler.unscale_(optimizer)                            # AD148 on the second micro-batch
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % 2 == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()

**The fix.** Unscale and clip once per step, after the last backward() of the accumulation, just
before `scaler.step(optimizer)` (inside the `if` that steps).
""",
    heading="GradScaler.unscale_() was called again before update()",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler(\"cpu\")\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]\n"
    ))

UNSCALE_AFTER_STEP = _code(
    "AD149",
    "GradScaler.unscale_() was called after step(): unscale (and clip) before the step",
    """\
**What it means.** With mixed precision, `scaler.unscale_(optimizer)` divides the gradients by
the loss scale so that they can be clipped; `scaler.step(optimizer)` then applies them. Clipping
after the step changes gradients that the step has already used, so GradScaler refuses an
`unscale_()` between `step()` and `update()` and PyTorch raises "unscale_() is being called after
step()". autograd-doctor names the `step()` that ran first and moves the `unscale_()`, with the
clipping right after it, to just before that step.

**Minimal example.**

    for x, y in batches:
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(x), y)).backward()
        scaler.step(optimizer)
        scaler.unscale_(optimizer)                                # AD149
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.update()

**The fix.** `scaler.unscale_(optimizer)`, then the clipping, then `scaler.step(optimizer)` and
`scaler.update()`.
""",
    heading="GradScaler.unscale_() was called after step()",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler(\"cpu\")\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]\n"
    ))

STEP_BEFORE_UPDATE = _code(
    "AD150",
    "GradScaler.step() was called again before update(): call update() once per iteration",
    """\
**What it means.** With mixed precision, `scaler.step(optimizer)` steps the optimizer unless
the gradients hold an inf or NaN, and `scaler.update()` then adjusts the loss scale for the next
iteration. Per optimizer, GradScaler allows one `step()` between two `update()` calls: a loop
that never calls `update()` (or calls it only on some iterations) fails on the second
`scaler.step()` with "step() has already been called since the last update()". autograd-doctor
names the step and adds `scaler.update()` right after it when the program calls it nowhere, or
names the `update()` that did not run (one in another function, such as an epoch-end hook, is to
move after the step: adding a second would leave that one with no step before it).

**Minimal example.**

    for x, y in batches:
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(x), y)).backward()
        scaler.step(optimizer)                                    # AD150 on the second batch

**The fix.** `scaler.update()` after the steps, once per iteration.
""",
    heading="GradScaler.step() was called again before update()",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler(\"cpu\")\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]\n"
    ))

FLOAT16_GRADIENTS = _code(
    "AD151",
    "GradScaler was given float16 gradients: the trained model was cast to float16",
    """\
**What it means.** Mixed precision keeps the trained parameters in float32 and lets
`torch.autocast` run the forward in float16; `GradScaler` scales the loss so that small
float16 activations' gradients do not underflow, then divides the float32 gradients back.
When the trained model itself was cast to half precision (`model.half()`,
`model.to(dtype=torch.float16)`, often together with frozen models that may well be float16),
its parameters and gradients are float16 and `scaler.unscale_()` (or `scaler.step()`) raises
"Attempting to unscale FP16 gradients." at a line far from the cast. autograd-doctor names the
cast of the module whose parameters the optimizer steps, and casts it to float32 instead; for a
submodule cast by the class that builds it (`self.act = nn.PReLU(c).to(torch.float16)`,
`self.encoder.half()` in `__init__`), that line.

**Minimal example.**

    model = nn.Linear(3, 1)
    model.half()                                   # AD151: the line to change
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    loss = model(torch.randn(4, 3).half()).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)                         # raises here

**The fix.** Keep the trained model in float32 (`model.float()`, or cast only the frozen
models); for float16 compute, run the forward under
`torch.autocast(device_type, dtype=torch.float16)`.
""",
    heading="GradScaler was given float16 gradients")

SPARSE_GRADIENT_COMBINED = _code(
    "AD152",
    "a sparse gradient (an embedding with sparse=True) was combined with a dense tensor",
    """\
**What it means.** `nn.Embedding(..., sparse=True)` (and `EmbeddingBag`) gives its weight a
sparse gradient: only the rows the batch looked up. Code written for dense gradients, such as
Gaussian noise added for differential privacy (`p.grad = p.grad + noise`), then fails with
"add(sparse, dense) is not supported. Use add(dense, sparse) instead.", a message about `add`
that does not mention the embedding. autograd-doctor names the sparse `.grad` on the line and
the embedding it belongs to.

**Minimal example.**

    embedding = nn.Embedding(10, 4, sparse=True)
    embedding(torch.tensor([1, 2])).sum().backward()
    for p in embedding.parameters():
        p.grad = p.grad + 0.01 * torch.randn(p.shape)      # AD152

**The fix.** Make the gradient dense where it is combined, `p.grad.to_dense() + noise`
(`to_dense()` returns a dense gradient as it is, so the line works for every parameter), or
create the embedding with `sparse=False`. An in-place spelling (`p.grad.add_(noise)`,
`p.grad += noise`) is assigned back, `p.grad = p.grad.to_dense() + noise`: the dense copy is a
new tensor.
""",
    heading="a sparse gradient was combined with a dense tensor",
)

SPARSE_GRADIENT_OPTIMIZER = _code(
    "AD173",
    "an optimizer that takes only dense gradients was given an embedding's sparse gradient (sparse=True)",
    """\
**What it means.** `nn.Embedding(..., sparse=True)` and `nn.EmbeddingBag(..., sparse=True)` give
their weight a sparse gradient (only the rows the batch looked up), as DLRM-style recommenders do
for SGD. Most optimizers (`Adam`, `AdamW`, `RMSprop`, `Adadelta`, ...) take dense gradients only,
and the first `step()` fails with "Adam does not support sparse gradients, please consider
SparseAdam instead", a message that names neither the parameter nor the embedding. `SGD` takes
sparse gradients, but its `weight_decay` adds the dense parameter to them and fails inside
`step()` with "add(sparse, dense) is not supported". autograd-doctor names the embeddings whose weights hold a sparse gradient in that optimizer and
the constructor calls that asked for it.

**Minimal example.**

    embedding = nn.EmbeddingBag(50, 8, mode="sum", sparse=True)   # AD173: the line to change
    optimizer = torch.optim.Adam(embedding.parameters(), lr=1e-2)
    embedding(torch.tensor([1, 2]), torch.tensor([0])).sum().backward()
    optimizer.step()                                              # raises here

**The fix.** Create the embeddings with `sparse=False`: the gradient then holds the same values,
dense, and the optimizer applies its own update to it. To keep sparse updates instead, give the
embeddings' weights to `torch.optim.SparseAdam` (it takes sparse gradients only) and the other
parameters to a second, dense optimizer: a different algorithm (lazy moments), so it is advice.
""",
    heading="an optimizer for dense gradients was given a sparse one",
)

LEGACY_FUNCTION_CALLED = _code(
    "AD174",
    "a custom autograd.Function in the old style (instance forward, called as `MyFunction()(x)`)",
    """\
**What it means.** Before PyTorch 1.3, a custom `torch.autograd.Function` was instantiated and
called, `BinActive()(x)`, with instance methods `forward(self, input)` / `backward(self,
grad_output)` keeping tensors with `self.save_for_backward`. Since PyTorch 1.5 that call raises
"Legacy autograd function with non-static forward method is deprecated": Functions are applied
through the class, `BinActive.apply(x)`, which passes a context object as the first argument of
`forward` and `backward`. autograd-doctor names the calls of that Function in your files.

**Minimal example.**

    class Sign(torch.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x.sign()
        def backward(self, grad):
            x, = self.saved_tensors
            return grad * (x.abs() < 1)

    x = torch.randn(4, requires_grad=True)
    Sign()(x).sum().backward()                  # AD174: raises here

**The fix.** Call it through the class, `Sign.apply(x)`, and write `forward` and `backward` as
static methods taking `ctx` (`@staticmethod def forward(ctx, x): ctx.save_for_backward(x)`).
Where the class has no `__init__` and is called with no constructor arguments, `.apply` alone
computes the same values: the methods' first argument is then the context, whose
`save_for_backward`, `saved_tensors` and attributes are the ones the old-style code used on
`self`. A Function built with arguments (`Quantize(bits)(x)`) needs them passed to `apply` and
read from `forward`'s arguments: advice only. A Function that defines no `backward` at all, whose
`forward` is written with differentiable PyTorch operations, was never meant to supply its own
gradient: the class is named and the change makes it an `nn.Module` (the base class,
`super().__init__()` in `__init__`, the `save_for_backward` calls dropped), which autograd
differentiates as written.
""",
    heading="an old-style custom autograd.Function called as an instance",
)

CLEARED_BEFORE_STEP = _code(
    "AD153",
    "zero_grad() clears gradients before step() applies them: each step trains on the last backward() only",
    """\
**What it means.** With gradient accumulation, backward() runs on several micro-batches and
`step()` once: the gradients add up in `.grad` until the step applies them. A `zero_grad()` that
also runs before every micro-batch clears what the earlier micro-batches computed, so each step
applies the last micro-batch's gradient alone (and, when the loss is divided by the accumulation
factor, a fraction of it). Nothing fails: PyTorch raises nothing for this (it is reported as a
warning). autograd-doctor counts, per backward() statement, how often a step applied its
gradients and how often a `zero_grad()` cleared them first, and, when it stops, reports a
`zero_grad()` that cleared them at least twice and at least as often as they were applied.

**Minimal example.**

    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad()                        # AD153
        (F.mse_loss(model(x), y) / 2).backward()
        if (i + 1) % 2 == 0:
            optimizer.step()

**The fix.** Clear the gradients after the step that applies them: move `optimizer.zero_grad()`
right after `optimizer.step()` (inside the `if`), or delete it where the gradients are already
cleared there.
""",
    heading="zero_grad() clears gradients before step() applies them",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(6)]\n"
    ))

STALE_CLOSURE = _code(
    "AD154",
    "L-BFGS was given a closure that runs no backward(): every evaluation sees the same loss and gradients",
    """\
**What it means.** `torch.optim.LBFGS.step(closure)` calls the closure several times per step,
once per trial point of its search, and reads the gradients the closure's backward() leaves in
`.grad`. A closure that returns a loss computed before the step (`def closure(): return loss`,
written so that an optimizer needing a closure can be swapped in) gives every evaluation the same
value and leaves the gradients of the starting point: L-BFGS stops after its first iteration or
follows stale gradients, and nothing fails. autograd-doctor notes the L-BFGS steps in which the
closure ran no backward() and, when it stops, names the `step(closure)` call.

**Minimal example.**

    loss = ((w - target) ** 2).sum()
    loss.backward()
    optimizer.step(lambda: loss)       # AD154

**The fix.** Compute the loss inside the closure and backpropagate it there:
`def closure(): optimizer.zero_grad(); loss = ((w - target) ** 2).sum(); loss.backward(); return loss`,
then `optimizer.step(closure)`.
""",
    heading="L-BFGS was given a closure that runs no backward()",
    example_setup=(
        "w = nn.Parameter(torch.zeros(3))\n"
        "target = torch.tensor([1.0, -2.0, 0.5])\n"
        "optimizer = torch.optim.LBFGS([w], max_iter=5)\n"
    ))

CLOSURE_GRADIENTS_NOT_CLEARED = _code(
    "AD180",
    "an L-BFGS closure that does not clear the gradients: each evaluation adds its gradient to the previous ones",
    """\
**What it means.** `torch.optim.LBFGS.step(closure)` calls the closure several times per step,
once per trial point, and reads `.grad` after each call as the gradient at that point. backward()
adds to `.grad`; a closure that calls backward() without clearing the gradients first (the
`zero_grad()` moved out of it, once before `step()`, to allow gradient accumulation) hands L-BFGS
the sum of the gradients of every evaluation so far: its directions and curvature pairs are wrong,
the fit wanders off or diverges, and nothing fails. autograd-doctor notes the L-BFGS steps in which
every evaluation added into the gradient the previous one left and, when it stops, names the
closure.

**Minimal example.**

    optimizer.zero_grad()              # once per step, outside the closure
    def closure():                     # AD180
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss
    optimizer.step(closure)

**The fix.** Clear the gradients at the top of the closure, `optimizer.zero_grad()` before the
forward pass, so that each evaluation's backward() leaves exactly its own gradient.
""",
    heading="an L-BFGS closure that does not clear the gradients",
    example_setup=(
        "w = nn.Parameter(torch.zeros(3))\n"
        "target = torch.tensor([1.0, -2.0, 0.5])\n"
        "optimizer = torch.optim.LBFGS([w], max_iter=5)\n"
    ))

NO_GRAD_ALIAS = _code(
    "AD155",
    "a torch.no_grad() block only gave existing tensors new names: they still carry their history",
    """\
**What it means.** `torch.no_grad()` stops autograd from recording the operations run inside
the block. It does not change tensors that already exist, and an assignment runs no operation:
`with torch.no_grad(): mu_stop = mu` binds a second name to the same tensor, history included.
Code that means a stop-gradient this way (the DReG estimator's "gradient only through z") still
sends gradient through every use of the new name; nothing fails, the gradient is the one the stop
was meant to remove. PyTorch raises nothing for it (it is numbered with the errors only because
the warning numbers were taken). autograd-doctor reports it when a step() starts, for a block
the program entered whose body only binds names to names that held tensors requiring grad.

**Minimal example.**

    encoder = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    mu = encoder(x)
    with torch.no_grad():
        mu_stop = mu                      # AD155: the same tensor, still in the graph
    (mu * 2 - mu_stop).pow(2).sum().backward()
    optimizer.step()

**The fix.** Detach: `mu_stop = mu.detach()` (a tensor with the same values and no history),
or compute the value inside the block (`mu_stop = encoder(x)` under no_grad).
""",
    heading="a torch.no_grad() block only gave existing tensors new names",
    example_setup="x = torch.randn(4, 3)\n",
)

PROBABILITIES_AS_LOG_PROBABILITIES = _code(
    "AD156",
    "kl_div or nll_loss given probabilities (a softmax's output): they expect log-probabilities",
    """\
**What it means.** `F.kl_div(input, target)` / `nn.KLDivLoss` and `F.nll_loss` / `nn.NLLLoss`
read their input as log-probabilities, the output of `log_softmax`. Given probabilities, the
output of `softmax`, KL divergence becomes `target * (log(target) - p)`, whose gradient raises
every class's probability in proportion to the target instead of moving the distribution towards
it, and NLL becomes `-p[target]`, whose gradient vanishes where the model is most wrong. The
program runs and the loss goes down; nothing is raised (it is numbered with the errors only
because the warning numbers were taken). autograd-doctor looks once per backward() line: the graph
holds a softmax and the source around backward() gives one of these losses a `softmax(...)` call,
or a name assigned one just before, as its input.

**Minimal example.**

    student = F.softmax(model(x), dim=1)                      # probabilities
    loss = F.kl_div(student, teacher, reduction="batchmean")  # AD156
    loss.backward()

**The fix.** `F.log_softmax(model(x), dim=1)` (the same arguments); where the probabilities are
also read elsewhere, give the loss `torch.log(student)`.
""",
    heading="kl_div or nll_loss given probabilities",
    example_setup=(
        "model = nn.Linear(4, 3)\n"
        "x = torch.randn(8, 4)\n"
        "teacher = torch.softmax(torch.randn(8, 3), dim=1)\n"
    ),
)

DISCARDED_OUT_OF_PLACE_RESULT = _code(
    "AD157",
    "an out-of-place tensor method was called as a statement: its result is thrown away",
    """\
**What it means.** `attn.masked_fill(mask, 0.)`, `x.clamp(0, 1)`, `h.index_fill(0, rows, 0)`
return a new tensor and leave their receiver as it was. Called as a statement, the result is
thrown away and the line does nothing: the values it was meant to change reach the loss as they
were (Flamingo's cross-attention kept attending for text before any image). Nothing fails, and
the gradient is that of the unchanged values (it is numbered with the errors only because the
warning numbers were taken). autograd-doctor reads, once per backward() line, the functions
running around backward() (where the receiver must hold a tensor) and the forward of each module
bound there.

**Minimal example.**

    scores = layer(x)
    scores.masked_fill(mask, 0.)     # AD157: the masked copy is thrown away
    scores.sum().backward()

**The fix.** Keep the result: `scores = scores.masked_fill(mask, 0.)`. The in-place method
(`masked_fill_`) also changes the tensor, but fails where autograd saved it.
""",
    heading="an out-of-place tensor method called as a statement",
    example_setup=(
        "layer = nn.Linear(4, 3)\n"
        "x = torch.randn(5, 4)\n"
        "mask = torch.rand(5, 3) > 0.5\n"
    ),
)

SELF_WEIGHTED_AVERAGE = _code(
    "AD158",
    "a loss averages values with softmax weights computed from those same values, not detached",
    """\
**What it means.** An importance-weighted estimate (the IWAE bound, a self-normalised importance
sampler) differentiates `sum_k w_k * grad(log_w_k)`, with the normalised weights
`w = softmax(log_w)` held constant. Written as `(softmax(log_w) * log_w).sum()` without a
`.detach()`, autograd also differentiates the weights and adds `sum_k grad(w_k) * log_w_k`: every
gradient of the encoder and decoder is off, and nothing fails. PyTorch raises nothing for it (it
is numbered with the errors only because the warning numbers were taken). autograd-doctor looks at
each backward() line's graph for a loss reduced from a product of a softmax and the very tensor
the softmax was computed from.

**Minimal example.**

    log_w = encoder(x)                          # log importance weights, one per sample
    w = F.softmax(log_w, dim=-1)                # AD158: the weights keep their graph
    loss = -(w * log_w).sum(-1).mean()
    loss.backward()

**The fix.** Detach the weights: `w = F.softmax(log_w, dim=-1).detach()`; the loss's value is
unchanged and its gradient is the estimator's. Where the smooth maximum itself is meant (a
log-sum-exp), write `torch.logsumexp(log_w, -1)`, whose gradient is exactly the detached one.
""",
    heading="softmax weights computed from the values they average, not detached",
    example_setup="import torch.nn.functional as F\nencoder = torch.nn.Linear(3, 5)\nx = torch.randn(4, 3)\n",
)

WIDENED_CUSTOM_GRADIENT = _code(
    "AD159",
    "a custom autograd.Function's backward returned a gradient larger than its input, summed down silently",
    """\
**What it means.** The engine accepts, for an input of a custom `autograd.Function`, a gradient
whose shape the input's expands to, and sums it down to the input's shape (so that a forward
that broadcasts an input may return the output-shaped gradient). A backward whose arithmetic
broadcast by mistake returns such a gradient too: a bare `.squeeze()` drops a size-1 axis of the
input along with the reduced one, a division then broadcasts two axes against each other, and
the input gets a sum over that spurious axis. Nothing fails; the gradient is wrong. PyTorch
raises nothing for it (it is numbered with the errors only because the warning numbers were
taken). autograd-doctor compares, while a doctor runs, each gradient a custom backward returns
with its input's shape and with the shapes of the gradients it was given.

**Minimal example.**

    class Normalise(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):                      # x: (4, 3, 1), normalised along dim 0
            ctx.save_for_backward(x)
            return x / x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            total = x.sum(0, keepdim=True)
            inner = (g * x).sum(0) / total.squeeze()   # AD159: (3, 1) / (3,) broadcasts to (3, 3)
            return (g - inner.unsqueeze(0)) / total

    Normalise.apply(x).pow(2).sum().backward()

**The fix.** Reduce or squeeze only the axis the forward reduced (`total.squeeze(0)`, or keep
`keepdim=True` throughout), so that the backward returns a gradient of the input's shape;
`torch.autograd.gradcheck` on small inputs of every shape the program uses confirms it.
""",
    heading="a custom backward returned a gradient larger than its input",
    example_setup="x = (torch.rand(4, 3, 1) + 0.5).requires_grad_()\n",
)

SOFTMAX_BEFORE_CROSS_ENTROPY = _code(
    "AD160",
    "cross_entropy given a softmax's output: the scores are normalised twice",
    """\
**What it means.** `F.cross_entropy` / `nn.CrossEntropyLoss` take raw scores (logits) and apply
`log_softmax` to them. A classifier that ends in `nn.Softmax` (or a `F.softmax` before the loss)
hands it probabilities instead: the loss becomes the cross-entropy of `softmax(p)` with every `p`
in [0, 1], nearly flat, and its gradient is a small fraction of the one meant, so the classifier
trains slowly or not at all. Nothing fails (it is numbered with the errors only because the
warning numbers were taken). autograd-doctor looks once per backward() line at the graph for a
`log_softmax` applied to a softmax's output, and reads the source around backward() for that
softmax.

**Minimal example.**

    classifier = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))   # AD160
    loss = F.cross_entropy(classifier(x), labels)
    loss.backward()

**The fix.** Drop the softmax: `nn.Sequential(nn.Linear(4, 3))`, and apply `softmax` only where
probabilities are read (a prediction's confidence). `F.nll_loss(torch.log(p), labels)` is the
loss of probabilities if they must stay.
""",
    heading="cross_entropy given a softmax's output",
    example_setup=(
        "import torch.nn.functional as F\n"
        "x = torch.randn(8, 4)\n"
        "labels = torch.randint(0, 3, (8,))\n"
    ),
)

ZERO_FACTOR_PARAMETERS = _code(
    "AD161",
    "two parameters of a module start at zero and get zero gradients: factors of a product that never train",
    """\
**What it means.** A low-rank adapter (LoRA, DoRA) adds a product of two factors, `x @ A^T @ B^T`
or `A @ B`, to a frozen weight. The gradient of each factor is the other factor times the
output's gradient, so one factor must start at random values and the other at zero (the product,
and so the change to the pretrained model, starts at zero). Created both with `torch.zeros`, both
gradients are exactly zero at every step: the adapter never moves, no `.grad` is None, nothing
fails (it is numbered with the errors only because the warning numbers were taken).
autograd-doctor looks at the first two `step()` calls of each optimizer for a module of the model
with two or more parameters in the optimizer that are all zero with all-zero gradients.

**Minimal example.**

    class LoRA(nn.Module):
        def __init__(self, d_in, d_out, r):
            super().__init__()
            self.lora_A = nn.Parameter(torch.zeros(r, d_in))    # AD161
            self.lora_B = nn.Parameter(torch.zeros(d_out, r))

        def forward(self, x):
            return x @ self.lora_A.t() @ self.lora_B.t()

    adapter = LoRA(4, 3, 2)
    optimizer = torch.optim.SGD(adapter.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        (base(x) + adapter(x)).pow(2).mean().backward()
        optimizer.step()

**The fix.** Draw the factor applied to the input first at random
(`torch.randn(r, d_in) / math.sqrt(r)`, or `nn.init.kaiming_uniform_`) and keep the other at zero.
""",
    heading="two factors of a product both start at zero",
    example_setup=(
        "base = nn.Linear(4, 3)\n"
        "x = torch.randn(8, 4)\n"
    ),
)

UNGRADED_GATHER = _code(
    "AD162",
    "features gathered with torch.distributed.all_gather carry no graph: what computed them gets no gradient",
    """\
**What it means.** `torch.distributed.all_gather(outputs, tensor)` copies every process's
`tensor` into the `outputs` buffers. A collective is not recorded by autograd: the buffers carry no
graph, even the one that holds this process's own tensor. A loss computed only from the gathered
buffers (a contrastive loss over every process's batch, CLIP-style) sends no gradient to the
encoders that computed `tensor`: they never train, while anything else in the loss (a learned
temperature) does. Nothing fails. PyTorch raises nothing for it (it is numbered with the errors only
because the warning numbers were taken). autograd-doctor remembers, at a gather of a tensor with a
graph, the parameters that graph reaches, and reports at the next optimizer step() that holds some of
them when none of them got a gradient.

**Minimal example.**

    for step in range(2):
        features = encoder(x)
        gathered = [torch.zeros_like(features) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, features)      # AD162: plain copies, no graph
        loss = temperature * torch.cat(gathered).pow(2).mean()
        loss.backward()
        optimizer.step()                          # the encoder gets no gradient

**The fix.** Put this process's own tensor, with its graph, back in its place after the gather
(`gathered[dist.get_rank()] = features`, what open_clip's `gather_features` does): each process
then gets the gradient of its own features. Or gather with `torch.distributed.nn.all_gather`, which
is differentiable and also sends gradients to the other processes' features.
""",
    heading="features gathered with all_gather carry no graph",
    example_around=(
        "import os\nimport tempfile\nimport torch.distributed as dist\n"
        "store = tempfile.NamedTemporaryFile(delete=False).name\n"
        "dist.init_process_group('gloo', init_method='file://' + store, rank=0, world_size=1)\n"
        "try:\n"
        "    encoder = nn.Linear(4, 3)\n"
        "    temperature = nn.Parameter(torch.tensor(1.0))\n"
        "    optimizer = torch.optim.SGD([*encoder.parameters(), temperature], lr=0.1)\n"
        "    x = torch.randn(5, 4)\n"
        "{fragment}\n"
        "finally:\n"
        "    dist.destroy_process_group()\n"
        "    if os.path.exists(store):\n"
        "        os.remove(store)\n"
    ),
)

STRAIGHT_THROUGH_CODEBOOK_TERM = _code(
    "AD163",
    "a codebook loss compares the straight-through output, not the codebook's lookup: the codebook never gets a gradient",
    """\
**What it means.** A vector quantiser passes its input `x` on as `x + (e - x).detach()`, the
straight-through estimator: the value is the codebook entry `e`, the gradient goes to `x`. The
VQ-VAE objective trains the codebook with `||sg[x] - e||^2`, which must read `e` itself. Written
on the straight-through output (`mse(x + (e - x).detach(), x.detach())`), the term's gradient goes
through the identity path into `x` (one more commitment term for the encoder) and the codebook,
held by the optimizer, never gets a gradient: it stays at its initialisation. Nothing fails.
PyTorch raises nothing for it (it is numbered with the errors only because the warning numbers were
taken). autograd-doctor looks, at the first step() calls of an optimizer that holds parameters
without a gradient beside parameters with one, for a tensor in the frame around step() whose graph
reaches them and another of the same values whose graph does not, compared with a detached value.

**Minimal example.**

    for step in range(2):
        x = encoder(data)
        index = torch.cdist(x.detach(), codebook.weight.detach()).argmin(dim=1)
        e = codebook(index)
        quantized = x + (e - x).detach()
        term = F.mse_loss(quantized, x.detach())     # AD163: the codebook gets no gradient
        loss = (decoder(quantized) - data).pow(2).mean() + term
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Compare the lookup itself: `F.mse_loss(e, x.detach())`. The forward values are
the same (the straight-through output's value is `e`), and the gradient reaches the codebook.
""",
    heading="a codebook loss on the straight-through output",
    example_setup=(
        "import torch.nn.functional as F\n"
        "torch.manual_seed(0)\n"
        "encoder, decoder, codebook = nn.Linear(6, 3), nn.Linear(3, 6), nn.Embedding(5, 3)\n"
        "optimizer = torch.optim.SGD([*encoder.parameters(), *decoder.parameters(), *codebook.parameters()], lr=0.1)\n"
        "data = torch.randn(8, 6)\n"
    ),
)

UNUSED_SUBMODULE = _code(
    "AD164",
    "a submodule the optimizer holds is never read by its module's code: it never gets a gradient",
    """\
**What it means.** A layer built in `__init__` beside a twin of the same shapes (`out_v` beside
`out_e`, `key_proj` beside `query_proj`) and then never called, because the twin is called where it
belonged: the optimizer holds its parameters, they never get a gradient and never change, and the
twin does both jobs. Nothing fails. PyTorch raises nothing for it (it is numbered with the errors
only because the warning numbers were taken). autograd-doctor looks at the first two step() calls of
an optimizer that holds parameters without a gradient beside parameters with one: a submodule of a
module of the user's class, with no gradient at both, whose attribute name is read nowhere in the
class's file (no `.name`, no `"name"` for getattr), while a sibling of the same type and shapes is
called at two lines or more, is reported at its construction, with its twin's calls. A head used
only in evaluation is read somewhere, and a leftover head with no such twin is not this mistake: both
are silent.

**Minimal example.**

    class Attention(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.query_proj = nn.Linear(width, width)
            self.key_proj = nn.Linear(width, width)    # AD164: never read
        def forward(self, x):
            q = self.query_proj(x)
            k = self.query_proj(x)                     # meant self.key_proj
            return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ x

    model = Attention(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        optimizer.zero_grad()
        model(torch.randn(3, 4)).pow(2).mean().backward()
        optimizer.step()

**The fix.** Call the module where the model means it (here `k = self.key_proj(x)`), or remove it.
Which call of its twin was meant is the program's own: the tool names the construction and the
twin's calls, and offers no change.
""",
    heading="a submodule never read by its module's code",
)

MIXED_SECOND_DERIVATIVES = _code(
    "AD165",
    "second derivatives taken with one gradient call over a whole first derivative mix the partials",
    """\
**What it means.** For a network u of points g with several coordinates (x, y), the first
derivative `u_g = torch.autograd.grad(u, g, torch.ones_like(u), create_graph=True)[0]` has one
column per coordinate. One more call over the whole of it,
`torch.autograd.grad(u_g, g, torch.ones_like(u_g), create_graph=True)[0]`, differentiates the
*sum* of its columns: column j of the result is the sum over i of d(u_g[:, i]) / d g[:, j], a
row of the Hessian summed, mixed partials included. Taking its columns as u_xx and u_yy gives a
Laplacian with 2 u_xy added; a physics-informed loss then fits another equation, and nothing
fails. PyTorch raises nothing for it (it is numbered with the errors only because the warning
numbers were taken). autograd-doctor remembers, while a doctor runs, the first derivatives that
`torch.autograd.grad` returns, and reports a second call over one of them, with respect to the
same input, with a ones `grad_outputs`, whose result the code reads column by column.

**Minimal example.**

    g = torch.rand(8, 2, requires_grad=True)
    u = net(g)
    u_g = torch.autograd.grad(u, g, torch.ones_like(u), create_graph=True)[0]
    u_gg = torch.autograd.grad(u_g, g, torch.ones_like(u_g), create_graph=True)[0]   # AD165
    laplacian = u_gg[:, 0] + u_gg[:, 1]       # u_xx + u_yy + 2 u_xy
    (laplacian ** 2).mean().backward()

**The fix.** Differentiate each column on its own and keep its diagonal entry:
`u_xx = torch.autograd.grad(u_g[:, [0]], g, torch.ones_like(u_g[:, [0]]), create_graph=True)[0][:, [0]]`,
and the same for each coordinate (`torch.func.hessian` gives the whole Hessian per point).
""",
    heading="second derivatives from one gradient call over a whole first derivative",
    example_setup="net = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))\n",
)

SHALLOW_TENSOR_COPY = _code(
    "AD166",
    "copy.copy of a tensor shares its memory: the \"copy\" changes with every write to the original",
    """\
**What it means.** `copy.copy(t)` of a tensor returns a new tensor object over the *same*
storage (the copy protocol's shallow copy). A backup made with it (`backup = copy(t)`,
`backup.data = copy(t.data)`) is the original under another name: every later write to `t`
(an optimizer step, a batch-norm layer updating its running statistics, `t.copy_(...)`) changes
the backup too, and restoring from it restores nothing. Nothing fails. PyTorch raises nothing
for it (it is numbered with the errors only because the warning numbers were taken).
autograd-doctor sees `copy.copy` called from your code on a tensor and checks that the result
shares the tensor's memory.

**Minimal example.**

    running_mean = torch.zeros(4)
    backup = copy.copy(running_mean)     # AD166: the same memory
    running_mean.add_(1.0)               # the backup changes too
    running_mean.copy_(backup)           # "restores" the new values

**The fix.** Copy the values: `t.clone()` (in the graph when `t` requires grad), or
`t.detach().clone()` for a copy outside it; `copy.deepcopy(t)` copies a leaf's memory too.
""",
    heading="copy.copy of a tensor shares its memory",
)

STEP_WITHOUT_GRADIENTS = _code(
    "AD167",
    "GradScaler.step() on an optimizer none of whose parameters got a gradient: the loss does not reach the model",
    """\
**What it means.** Under mixed precision, `scaler.step(optimizer)` first unscales the optimizer's
gradients and records, per device, whether they hold an inf or a NaN. When no parameter of the
optimizer has a gradient, there is nothing to check, and PyTorch stops with "AssertionError: No
inf checks were recorded for this optimizer.", which says nothing of why. The backward() before
it did not reach the model. The usual cause is a loss computed outside torch (NumPy, `.item()`,
`.tolist()`, a colour or metric library) and wrapped back into a tensor with
`torch.tensor(value, requires_grad=True)`, which silences "element 0 of tensors does not require
grad": that tensor is a new leaf, its gradient stops there, and the model gets none.
autograd-doctor checks that no parameter of the optimizer has a gradient and names the line that
made the new leaf the loss started from (recorded at run time), or the step.

**Minimal example.**

    value = model(x).pow(2).mean().item()
    loss = torch.tensor(value, requires_grad=True)     # AD167: a new leaf, outside the model's graph
    scaler.scale(loss).backward()
    scaler.step(optimizer)                             # raises here

**The fix.** Compute the loss with torch operations on the model's output (the same formula,
written with `torch.` functions instead of NumPy's), without `.item()`, `.numpy()` or
`torch.tensor()` on the way; backward() then reaches the parameters and the scaler has their
gradients to check.
""",
    heading="GradScaler.step() found no gradient: the loss does not reach the model",
    example_setup="model = torch.nn.Linear(3, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                  "scaler = torch.amp.GradScaler(\"cpu\")\nx = torch.randn(4, 3)\n",
)

CLIPPED_NON_FINITE_UNDER_SCALER = _code(
    "AD183",
    "clip_grad_norm_(error_if_nonfinite=True) under a GradScaler: it refuses the overflow the scaler expects",
    """\
**What it means.** With mixed precision, `scaler.scale(loss).backward()` multiplies the loss by a
large scale so that small float16 gradients do not vanish. The scaler finds that scale by trying:
when a step's scaled backward overflows, its gradients hold inf or NaN, `scaler.step(optimizer)`
skips that step and `scaler.update()` lowers the scale. The first steps of a run often overflow.
`clip_grad_norm_(params, max_norm, error_if_nonfinite=True)`, called between `unscale_` and
`step`, raises on those gradients ("The total norm of order 2.0 for gradients from `parameters`
is non-finite, so it cannot be clipped") before the scaler can skip the step: the expected
overflow stops the training. autograd-doctor reports it when an enabled GradScaler is in the
program and the loop steps through it.

**Minimal example.**

    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(x * 100).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)  # AD183
    scaler.step(optimizer)
    scaler.update()

**The fix.** Clip with `error_if_nonfinite=False` (the default): the step whose gradients
overflowed is skipped by `scaler.step()` as it would have been, and every other step is clipped
as before. Non-finite gradients at a scale the scaler has already lowered many times are another
matter (a loss that is itself NaN): look at the loss.
""",
    heading="clip_grad_norm_(error_if_nonfinite=True) refuses the overflow a GradScaler expects",
    example_setup="model = torch.nn.Linear(3, 3)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                  "scaler = torch.amp.GradScaler(\"cpu\", init_scale=2.0 ** 24)\nx = torch.randn(4, 3)\n",
)

DDP_REENTRANT_CHECKPOINT = _code(
    "AD185",
    "DistributedDataParallel with a reentrant checkpoint: a parameter is marked ready twice",
    """\
**What it means.** DistributedDataParallel puts a hook on every parameter's gradient and marks
the parameter "ready" for the all-reduce when it fires. A reentrant gradient checkpoint
(`checkpoint(block, x, use_reentrant=True)`, the old default) runs the block's backward as a
backward() of its own, inside the outer one; with `find_unused_parameters=True` (or a block
checkpointed twice, or weights shared between checkpointed blocks) the hook of a parameter in
the block fires a second time there, and backward() raises "Expected to mark a variable ready only
once ... Parameter at index 13 with name layers.1.mlp.2.bias has been marked as ready twice".
autograd-doctor names the checkpoint call in the wrapped model's file.

**Minimal example.**

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])

        def forward(self, x):
            x = self.stem(x)
            for blk in self.blocks:
                x = checkpoint(blk, x, use_reentrant=True)   # AD185 points here
            return self.head(x)

    model = DistributedDataParallel(Net(), find_unused_parameters=True)
    model(x).sum().backward()

**The fix.** `use_reentrant=False`: the non-reentrant checkpoint recomputes the block through
saved-tensor hooks within the one backward(), each hook fires once, and the gradients are the
same. (DDP's `static_graph=True` is the other way out when the graph never changes.)
""",
    example_setup=(
        "import torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "from torch.utils.checkpoint import checkpoint\n"
        "if not dist.is_initialized():\n"
        "    dist.init_process_group(\"gloo\", store=dist.HashStore(), rank=0, world_size=1)\n"
        "x = torch.randn(2, 4)\n"
    ))

CHECKPOINT_RANDOM_NOT_REPLAYED = _code(
    "AD168",
    "a checkpoint with preserve_rng_state=False around random numbers (dropout): backward recomputes another forward",
    """\
**What it means.** A gradient checkpoint (`checkpoint(f, x, use_reentrant=True)`, or
`use_reentrant=False`) keeps none of `f`'s activations: backward() runs `f` again to get them. `preserve_rng_state=True`, the
default, saves the random generators' state before the forward and replays it for that second
run. With `preserve_rng_state=False` (set to save time), a function that draws random numbers
(dropout in training mode, `torch.rand`, noise) draws *other* numbers when it is recomputed:
another dropout mask. The loss was computed with the first mask, the gradients with the second,
so they belong to a forward that did not run. Nothing fails, and training slowly goes wrong.
PyTorch raises nothing for it (it is numbered with the errors only because the warning numbers
were taken). autograd-doctor compares the generators' state before and after each such call (for
calls with `preserve_rng_state=False` only) and reports it after the backward() that recomputed it.

**Minimal example.**

    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    x = torch.randn(8, 4, requires_grad=True)
    y = checkpoint(block, x, use_reentrant=True, preserve_rng_state=False)   # AD168
    y.sum().backward()

**The fix.** Pass `preserve_rng_state=True` (or leave it out): the recomputation replays the
forward's random numbers, the forward values stay the same and the gradients are those of the
forward that ran.
""",
    heading="a checkpoint that does not replay the random numbers its function drew",
    example_setup="from torch.utils.checkpoint import checkpoint\n",
)

OWN_STATE_LOADED = _code(
    "AD169",
    "a module loads its own state_dict(): every tensor is copied onto itself, the module keeps its values",
    """\
**What it means.** `module.state_dict()` returns the module's own tensors (detached, sharing
their memory). `target.load_state_dict(target.state_dict())` copies each of them onto itself:
nothing changes. Written to refresh a target network (DQN, QMIX, DDPG) from the network being
trained, it leaves the target with its initial weights for the whole run, and the TD targets
come from an untrained network. Nothing fails. autograd-doctor checks each `load_state_dict()`:
it reports a dict that holds the receiving module's own tensors, where that module is in no
optimizer that stepped and a module of the same class, bound where the load is called, is.

**Minimal example.**

    for step in range(4):
        loss = (online(x) - target(x).detach()).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 2 == 1:
            target.load_state_dict(target.state_dict())   # AD169: online was meant

**The fix.** Load the trained module's state: `target.load_state_dict(online.state_dict())`.
""",
    heading="a module loads its own state_dict()",
    example_setup=(
        "import copy\n"
        "online = nn.Linear(3, 1)\n"
        "target = copy.deepcopy(online)\n"
        "optimizer = torch.optim.SGD(online.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 3)\n"
    ))

COMBINED_INTO_LISTED_MODULE = _code(
    "AD182",
    "a module combined from a list of modules is one of them: the combination was written into it",
    """\
**What it means.** A function that combines a list of modules (a federated average, a weight
average of workers or seeds) starts from `merged = models[0]` and adds the others into it in
place: the "new" module is the list's first item, its own weights overwritten by the sum. From
then on the server (or averaged) model and that item are one module: loading the server's state
into each worker loads worker 0's state into itself, and worker 0's local training moves the
server model directly. Nothing fails. autograd-doctor checks each `load_state_dict()`: it reports
`a.load_state_dict(b.state_dict())` where `a` and `b` are one module, an item of a list of
distinct modules of its class, and `b` was bound to what a function of the program, given that
list, returned from its item written in place.

**Minimal example.**

    def average(models):
        merged = models[0]                          # AD182: merged is models[0] itself
        with torch.no_grad():
            for other in models[1:]:
                for p, q in zip(merged.parameters(), other.parameters()):
                    p.add_(q)
            for p in merged.parameters():
                p.div_(len(models))
        return merged

    for round_index in range(2):
        for worker in workers:
            worker.load_state_dict(server.state_dict())
        server = average(workers)

**The fix.** Combine into a copy: `merged = copy.deepcopy(models[0])`, so that the workers keep
their own weights and the server is a module of its own.
""",
    heading="a module combined from a list of modules is one of them",
    example_setup=(
        "workers = [nn.Linear(3, 1) for _ in range(3)]\n"
        "server = nn.Linear(3, 1)\n"
    ))

REINITIALIZED_AFTER_LOAD = _code(
    "AD171",
    "a data-dependent initialisation runs again after load_state_dict(): its flag is not in the state dict",
    """\
**What it means.** Some layers initialise their parameters from the first batch they see
(Glow's ActNorm sets its shift and scale so that the first batch comes out with zero mean and
unit variance) and remember that they did in a plain attribute, `self.initialized = True`. A
plain attribute is not part of the state dict: a model built anew and given a checkpoint with
`load_state_dict()` loads the trained parameters, but its flag is False again, and the first
forward pass overwrites them with the statistics of the current batch. Training resumes (or
sampling runs) from values the checkpoint never held; nothing fails. autograd-doctor looks at
each `load_state_dict()`: for the loaded module's classes written in your files, a `forward` that
writes into one of the module's parameters under `if not self.<flag>:` and sets the flag, where
the flag is a plain False.

**Minimal example.**

    class ActNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = nn.Parameter(torch.zeros(3))
            self.initialized = False                     # AD171: not in the state dict

        def forward(self, x):
            if not self.initialized:
                with torch.no_grad():
                    self.shift.copy_(-x.mean(0))
                self.initialized = True
            return x + self.shift

    trained = ActNorm()
    trained(torch.randn(8, 3))
    resumed = ActNorm()
    resumed.load_state_dict(trained.state_dict())
    resumed(torch.randn(8, 3))                           # overwrites the loaded shift

**The fix.** Keep the flag in a buffer, which the state dict carries:
`self.register_buffer("initialized", torch.tensor(False))` in `__init__`, and
`self.initialized.fill_(True)` where it is set.
""",
    heading="a data-dependent initialisation runs again after load_state_dict()",
)

GRAPH_CUT_DATA_COPY = _code(
    "AD170",
    "a value that requires grad was copied into a parameter through .data inside a forward: its gradient stops there",
    """\
**What it means.** Inside a module's `forward`, `param.data.copy_(value)` writes `value` into the
parameter's memory, and `value` requires grad: it was computed from tensors meant to train (a
variational posterior's mean and scale, sampled as `w = mu + eps * sigma`; a hypernetwork's
output). Autograd does not record a write through `.data`: the loss's gradient reaches the
parameter and stops there, so `mu` and `sigma` get nothing from this loss (only from the terms
that read them directly, such as a KL), and the next forward overwrites whatever step() did to the
parameter. Nothing fails. PyTorch raises nothing for it (it is numbered with the errors only
because the warning numbers were taken). autograd-doctor sees the copy in the forward and, at the
next optimizer step, the gradient the parameter got.

**Minimal example.**

    class SampledLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(3, 1)
            self.mu = nn.Parameter(torch.zeros(3))
        def forward(self, x):
            w = self.mu + 0.1 * torch.randn(3)
            self.layer.weight.data.copy_(w.view(1, 3))   # AD170: mu gets no gradient from the loss
            return self.layer(x)
    model = SampledLinear()
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(4, 3)).pow(2).mean().backward()
    optimizer.step()

**The fix.** Run the layer on the values themselves: `torch.func.functional_call(self.layer,
{"weight": w.view(1, 3), "bias": self.layer.bias}, (x,))`, or `F.linear(x, w.view(1, 3),
self.layer.bias)`. To set parameters without a gradient on purpose, copy `value.detach()` under
`torch.no_grad()`.
""",
    heading="a value that requires grad copied into a parameter through .data inside a forward",
)

TIED_PARAMETER_PARTLY_UNFROZEN = _code(
    "AD172",
    "a parameter two modules share was unfrozen through one of its names: the other module trains too",
    """\
**What it means.** Weight tying makes two modules hold one tensor: a language model's output
projection and its input embedding (`lm_head.weight = embed_tokens.weight`, Hugging Face's
`tie_word_embeddings`), a recommender's scorer and its item embedding. `requires_grad` belongs to the
tensor, not to a name: a script that freezes the model and then unfreezes `lm_head` unfreezes the
embedding too, and every step moves the token embeddings it meant to keep fixed
(`named_parameters()` lists the tensor once, under the first name, so a look at the frozen names
does not show it). Nothing fails. PyTorch raises nothing for it (it is numbered with the errors only
because the warning numbers were taken). autograd-doctor records where a module's parameter is
replaced by another module's (the tie) and, at an optimizer's first step, reports a tied parameter
that got a gradient, held by a model with frozen parameters, whose file unfroze it through one of
its two names only, after freezing the other.

**Minimal example.**

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.head = nn.Linear(4, 10, bias=False)
            self.head.weight = self.embed.weight        # AD172: one tensor, two names
        def forward(self, ids):
            return self.head(self.embed(ids))

    model = TinyLM()
    model.requires_grad_(False)
    model.head.requires_grad_(True)                     # unfreezes model.embed.weight too
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    model(torch.tensor([1, 2])).logsumexp(-1).mean().backward()
    optimizer.step()                                    # the embedding moves

**The fix.** Load or build the model untied (`tie_word_embeddings=False`), or give the unfrozen name
a copy of its own right after unfreezing it and keep the other frozen:
`model.head.weight = nn.Parameter(model.head.weight.detach().clone())` and
`model.embed.weight.requires_grad_(False)`, before the optimizer is built. If both names are meant
to train as one tensor, unfreeze the other by its own name too.
""",
    heading="a tied parameter unfrozen through one of its names",
)

TARGET_PROBABILITY_WEIGHT = _code(
    "AD175",
    "a loss weights a target's log-probability by its own probability, not detached",
    """\
**What it means.** A loss such as Dynamic Fine-Tuning's, `-stop_gradient(p_y) * log(p_y)`, weights
the log-probability of each example's target class by that target's probability, held constant.
Written `p = logp.exp(); loss = -(p * logp)` without a `.detach()`, autograd also differentiates
the weight: the term `-p * log(p)` is largest at `p = 1/e`, and its gradient is the intended one
multiplied by `1 + log(p)`, which lowers the target's probability wherever `p < 1/e`. The loss
value is the same; nothing fails. PyTorch raises nothing for it (it is numbered with the errors
only because the warning numbers were taken). autograd-doctor looks at each backward() line's
graph for a loss reduced from a product of a target's log-probability (one class per row, picked
by `gather` or indexing from a `log_softmax`) and the `exp` of that very tensor. An entropy (the
whole distribution) and a focal loss (`(1 - p) ** gamma`, meant to be differentiated) are other
things and are not reported.

**Minimal example.**

    logp = F.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    p = logp.exp()                              # AD175: the weight keeps its graph
    loss = -(p * logp).mean()
    loss.backward()

**The fix.** Detach the weight: `p = logp.exp().detach()`; the loss keeps its value and its
gradient is `p` times cross-entropy's, which raises every target's probability.
""",
    heading="a target's probability weighting its own log-probability, not detached",
    example_setup=("import torch.nn.functional as F\nlogits = torch.randn(4, 6, requires_grad=True)\n"
                   "labels = torch.tensor([0, 2, 1, 5])\n"),
)

GRADIENTS_ADDED_BY_ANOTHER_LOSS = _code(
    "AD176",
    "another optimizer's loss is backpropagated into an optimizer's gradients before it steps",
    """\
**What it means.** Two optimizers, one loss each, one backward() per loss, and the steps after
both: the critic's (or discriminator's) optimizer is cleared, its loss backpropagated; then the
actor's (or generator's) optimizer is cleared and its loss, computed *through* the critic, is
backpropagated too. That second backward() also adds the actor loss's gradients into the critic's
parameters, which still hold the critic loss's gradients, and the critic's step applies both: the
critic is pushed to rate the actor's actions highly. Nothing fails. PyTorch raises nothing for it
(it is numbered with the errors only because the warning numbers were taken). autograd-doctor
samples a few gradients of each optimizer as each backward() starts, during the first steps, and
warns at the critic's step when the backward() just before it filled the critic's gradients from
empty, the next one, with the actor's optimizer cleared, goes through the critic's parameters on
its way to the actor's and added to them, and no step of the critic came in between.

**Minimal example.**

    for x, real in batches:
        opt_d.zero_grad()
        loss_d = discriminator(real).neg().mean() + discriminator(generator(x).detach()).mean()
        loss_d.backward()
        opt_g.zero_grad()
        loss_g = discriminator(generator(x)).neg().mean()
        loss_g.backward()                          # AD176: also adds into opt_d's gradients
        opt_d.step()
        opt_g.step()

**The fix.** Keep the second loss out of the first model's parameters: turn their
`requires_grad` off while that loss is computed through them (`discriminator.requires_grad_(False)`
before, `True` after), or `loss_g.backward(inputs=list(generator.parameters()))`; or step the
first optimizer before the second backward(). Which of these the program means is its choice, so
the report is advice.
""",
    heading="another optimizer's loss backpropagated into an optimizer's gradients before its step",
    example_setup=(
        "generator, discriminator = nn.Linear(3, 3), nn.Linear(3, 1)\n"
        "opt_g = torch.optim.SGD(generator.parameters(), lr=0.1)\n"
        "opt_d = torch.optim.SGD(discriminator.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(3)]\n"
    ))

CLIP_OF_OTHER_PARAMETERS = _code(
    "AD177",
    "a gradient clip before step() covers only parameters the step does not update",
    """\
**What it means.** `clip_grad_norm_` (or `clip_grad_value_`) runs between an optimizer's
backward() and its step(), but it is given other parameters: another model's, whose gradients
are left from an earlier backward() (another loss) and which this step does not update. The clip
rescales gradients nothing applies now, and the gradients the step does apply are never clipped:
the updates are as large as the unclipped gradients make them. Nothing fails. PyTorch raises
nothing for it (it is numbered with the errors only because the warning numbers were taken).
autograd-doctor remembers the parameters each clipping call is given and, at a step during the
first steps when two or more optimizers are in use, which parameters the last backward() reached,
and warns when the clips since that backward() hold none of the stepping optimizer's parameters
and none that the backward() reached, while it reached the optimizer's own. When the clipped
module reaches a helper as an argument, the line named is the call that passes it.

**Minimal example.**

    for x, target in batches:
        opt_a.zero_grad()
        loss_fn(model_a(x), target).backward()
        torch.nn.utils.clip_grad_norm_(model_a.parameters(), 1.0)
        opt_a.step()
        opt_b.zero_grad()
        loss_fn(model_b(x), target).backward()
        torch.nn.utils.clip_grad_norm_(model_a.parameters(), 1.0)   # AD177: model_a, not model_b
        opt_b.step()

**The fix.** Clip the parameters that step() updates (`model_b.parameters()` here, or the layers
the clipping is meant for): which ones is the program's choice, so the report is advice.
""",
    heading="a gradient clip before step() over parameters the step does not update",
    example_setup=(
        "model_a, model_b = nn.Linear(3, 3), nn.Linear(3, 3)\n"
        "loss_fn = torch.nn.functional.mse_loss\n"
        "opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)\n"
        "opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(3)]\n"
    ))

TENSOR_ASSIGNED_TO_PARAMETER = _code(
    "AD186",
    "a computed tensor assigned to a parameter's name",
    """\
**What it means.** A module's `forward()` assigns a tensor computed with autograd to the name
of one of its registered parameters, often computed from that parameter itself (a projection or
normalisation step: `self.w = self.w / self.w.norm()`). `nn.Module` keeps only an `nn.Parameter`
(a leaf the optimizer steps) or None under a parameter's name, and raises "TypeError: cannot
assign 'torch.FloatTensor' as parameter 'w' (torch.nn.Parameter or None expected)". The value is
a new tensor with a graph on every call, not the parameter. autograd-doctor names the statement,
where the parameter was registered, and whether the value was computed from the parameter.

**Minimal example.**

    class Normalised(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))
        def forward(self, x):
            self.w = self.w / self.w.norm()      # AD186
            return x * self.w
    Normalised()(torch.randn(2, 3))

**The fix.** Depends on what the step is for. Delete the line when the parameter may train
without it (STGODE's authors did); bind the value to a local name and use it in `forward()` to
differentiate through the step; or constrain the parameter itself outside the graph, after
`optimizer.step()` under `torch.no_grad()`, or with `torch.nn.utils.parametrize`. Writing it
through `.data` inside `forward()` changes what is trained.
""",
    heading="a computed tensor assigned to a parameter's name")

# ---- AD2xx: problems PyTorch raises nothing for (warnings) ----------------------------

SILENT_ALIAS_WRITE = _code(
    "AD201",
    "a saved tensor was changed through an alias PyTorch does not track; the gradient is silently wrong",
    """\
**What it means.** `t.data` (and a few other aliases) share memory with `t` but not its
version counter. A write through such an alias changes what autograd saved without
PyTorch noticing, so backward silently computes a wrong gradient.

**Minimal example.**

    y = torch.sigmoid(x)
    y.data[0] = 0.0        # AD201: PyTorch raises nothing
    y.sum().backward()     # x.grad is wrong

**The fix.** Do not write into tensors the graph still needs; write out of place
(`y = y.index_fill(...)`), or clone first (`y = y.clone()`), and use `detach()` or
`torch.no_grad()` instead of `.data`.

**Found by** both modes for writes through `.data`: the default mode remembers which
elements such a write changed and, at the next backward, looks for them among the tensors
that graph saved before the write (a value put back before backward is not reported).
Writes through other untracked aliases (a NumPy view, DLPack) need the full mode
(`watch(mode="full")`, `autograd-doctor run --full`, `%%autograd_doctor --full`), which
records every save and names the line that saved the tensor.
""",
    heading="a saved tensor was changed through an alias PyTorch does not track",
    example_setup="x = torch.randn(3, requires_grad=True)\n",
    example_watch={"mode": "full"})

SAVED_CONTENT_CHANGED = _code(
    "AD202",
    "the contents of a saved tensor changed between the forward pass and backward()",
    """\
**What it means.** With `watch(verify_saved=True)`, autograd-doctor fingerprints every
saved tensor when it is saved and checks it when backward uses it. A changed
fingerprint with an unchanged version means the memory was written by something
PyTorch does not track: a `numpy()` view, DLPack, a custom kernel, `.data`.

**Minimal example.**

    y = torch.sigmoid(x)
    y.detach().numpy()[0] = 0.0   # invisible to PyTorch
    y.sum().backward()            # AD202: wrong gradient, no error

**The fix.** Copy before handing memory to NumPy or another library
(`y.detach().clone().numpy()`), or write out of place.
""",
    heading="the contents of a saved tensor changed between forward and backward",
    example_setup="x = torch.randn(3, requires_grad=True)\n",
    example_watch={"verify_saved": True})

OVERLAPPING_INPLACE = _code(
    "AD203",
    "an in-place op reads memory that it writes",
    """\
**What it means.** In `a -= a[:, :1]` the right-hand side is a view of `a`; as the
kernel writes `a`, it also changes the values it is still reading, so the result
depends on the order of the kernel's loop (and on the shape). PyTorch raises for some
patterns and silently computes garbage for others.

**Minimal example.**

    a = torch.arange(12.0).reshape(3, 4)
    a -= a[:, :1]        # AD203: column 0 becomes 0 first, then 0 is subtracted
                         # from the rest: rows 2 and 3 are wrong, no error

**The fix.** Make the operand independent: `a = a - a[:, :1]`, or
`a -= a[:, :1].clone()`.
""")

STALE_VIEW = _code(
    "AD204",
    "a view kept from earlier was changed by a later write to its base",
    """\
**What it means.** Slicing, `view`, `select`, `narrow`, indexing with integers and
slices return views that share memory with their base. A view appended to a list (or
stored in a dict) and a later in-place write to the base (the next loop iteration
reusing a buffer) change every stored view: all entries end up equal to the last one.

**Minimal example.**

    buf = torch.zeros(3)
    history = []
    for step in range(3):
        buf.copy_(torch.randn(3))    # AD204: overwrites the views stored before
        history.append(buf[:])        # a view, not a copy
    # every entry of history now equals the last buffer

**The fix.** Store a copy: `history.append(buf[:].clone())`, or build a new tensor in
each iteration instead of writing into a shared buffer.

**Found by** the full mode only (`watch(mode="full")`, `autograd-doctor run --full`,
`%%autograd_doctor --full`); views made by indexing (`buf[:]`) are seen with
`capture="mode"` (which implies the full mode).
""",
    example_watch={"capture": "mode"})

DETACH_ALIAS_WRITE = _code(
    "AD205",
    "a write through a detach() alias changed a tensor that is still in use",
    """\
**What it means.** `z = y.detach()` has no gradient history but shares storage (and
the version counter) with `y`. Writing into `z` changes `y` as well.

**Minimal example.**

    y = x * 2
    view = y.detach()
    view[0] = -1        # AD205: y[0] is now -1 too
    print(y)            # tensor([-1., 4.], grad_fn=<MulBackward0>)

**The fix.** For an independent copy use `y.detach().clone()`.
""",
    heading="a write through a detach() alias changed a tensor still in use",
    example_setup="x = torch.tensor([1.0, 2.0], requires_grad=True)\n")

NUMBER_TERM_IN_LOSS = _code(
    "AD206",
    "a loss term was cut from the graph (.item(), float(), .detach(), a no_grad block, autograd.grad) before it was "
    "added: it trains nothing",
    """\
**What it means.** `.item()` and `float(t)` turn a tensor into a plain Python number, and
`t.detach()` (or `t.data`) into a tensor without graph; `torch.autograd.grad(y, x)` without
`create_graph=True` returns gradients outside any graph. None of them has a gradient. Added to the
loss, such a term changes the printed loss value but not one gradient, so the term trains
nothing: whatever computed it (a regulariser, an auxiliary head, a KL term, a policy-gradient
term, an adversarial loss computed on a detached prediction, a gradient penalty) is never
pushed by it. No `.grad` is None (the rest of the loss reaches the parameters), no error is
raised. autograd-doctor reads the loss backpropagated by each backward() line once, follows its
added terms to their assignments (`+=` and `-=` in a loop, scalings such as `2.0 * term` or
`total / n` included), and warns about a term that surely carries no gradient (numbers, tensors
that do not require grad, torch's functions and parameter-free losses of them, also a loss
module made on the spot, `nn.MSELoss()(...)`) but cuts a tensor
that requires grad, in the term or in the assignment of a name it reads (also a name turned into
its own number before the loss is built, `adv = adv.detach().item()`, where the tensor it held was
computed from tensors that require grad, outside `no_grad`). A term computed through a frozen
module whose forward reads its input inside `with torch.no_grad():` (a perceptual or feature loss
whose network is frozen) is reported too, at that block: the input requires grad, but nothing of
the term carries a gradient back to it. So is a term a helper of the program computes from a hard
decision on a tensor that requires grad, `pred.argmax(1).float()` or `(p > 0.5).float()`: indices
and comparisons have no graph (the decision is named; over two classes of a softmax, or for a
sigmoid's 0.5 threshold, the change uses the decision's expected value, `pred[:, 1]` or `p`).
`x - x.detach()`, which keeps the gradient of `x` on purpose, is not reported.

**Minimal example.**

    ce = F.cross_entropy(model(x), y)
    reg = 0.01 * model.weight.pow(2).sum().item()   # AD206: a number
    loss = ce + reg
    loss.backward()                                  # the penalty trains nothing

**The fix.** Add the tensor itself (`reg = 0.01 * model.weight.pow(2).sum()`); keep `.item()` for
logging (`print(reg.item())`). For a detached term, detach only what must not be trained (a
target: `(fake - real.detach()).abs().mean()`), not the whole term. For a gradient penalty,
compute the gradients with `torch.autograd.grad(..., create_graph=True)`. For a name turned into
its own number for a log (`adv = adv.item()` before `loss = rec + adv`), the help moves that line
to just after `backward()`: the loss adds the tensor, and the log still gets the number.
""",
    example_setup=(
        "model = nn.Linear(3, 2)\n"
        "x = torch.randn(4, 3)\n"
        "y = torch.tensor([0, 1, 1, 0])\n"
    ))

STALE_OPTIMIZER_PARAMETERS = _code(
    "AD207",
    "the optimizer steps tensors that are no longer the model's parameters: the new ones never change",
    """\
**What it means.** An optimizer holds the tensors it was given when it was built. Replacing a
parameter or a network after that (`self.scale = nn.Parameter(...)`, `model.fc = nn.Linear(...)`,
`net = Net()` again) leaves the optimizer with the old tensors: the model now computes with the
new ones, which get gradients, and `step()` updates the old ones, which get none. Nothing fails
and no `.grad` of the model is None; the new parameters simply never change. autograd-doctor
records where a module's parameter or submodule is replaced, and, just before each `step()`,
warns when the optimizer's parameters got no gradient while the parameters that replaced them
got gradients and are in no optimizer (or, for a network bound to a name again, when none of
the optimizer's parameters belongs to the modules around the `step()` call any more). A parameter
made inside `forward()` (`self.rel_h = nn.Parameter(torch.randn(...))` there) is replaced at every
call: the optimizer holds none of them and the one the loss uses is new at every step; the report
names the line in forward() (the help: make it once, in `__init__`). A program that reloads a
state dict saved earlier into the optimizer after the replacement (`optimizer.load_state_dict(
initial_state)`, meant as a reset) is told at that line: a state dict names parameters by their
position, so the optimizer keeps the old tensors; the help builds the optimizer there instead.

**Minimal example.**

    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.bias = nn.Parameter(torch.zeros(1))   # AD207: the optimizer holds the old bias
    model(x).pow(2).mean().backward()
    optimizer.step()                            # the new bias never changes

**The fix.** Write the new value into the parameter the optimizer holds
(`with torch.no_grad(): model.bias.copy_(torch.zeros(1))`), or build the optimizer after the
replacement (or give it the new parameters with `optimizer.add_param_group`).
""",
    heading="the optimizer steps tensors that are no longer the model's parameters",
    example_setup="x = torch.randn(8, 4)\n")

CLIP_OUTSIDE_UPDATE = _code(
    "AD208",
    "gradient clipping ran where it does not change the step: step() applied gradients that were not clipped",
    """\
**What it means.** `clip_grad_norm_` and `clip_grad_value_` change what `.grad` holds at the
moment they run. They limit an update only between the backward() that computes the gradients
and the step() that applies them. Called before backward() (often right after `zero_grad()`,
when the gradients are None) they clip nothing; called after step(), they clip gradients the
step already applied, and the next backward() replaces them. Training goes on with unclipped
gradients and nothing fails. autograd-doctor remembers each clipping call and, just before each
step(), warns when a backward() changed the gradients of the optimizer's parameters after the
last clipping call since its previous step, and when the clipping call was given an iterator with
nothing left in it (a `model.parameters()` generator that an earlier loop read to the end): it
clipped nothing.

**Minimal example.**

    for x, y in batches:
        optimizer.zero_grad()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # AD208: nothing to clip yet
        F.mse_loss(model(x), y).backward()
        optimizer.step()                                          # unclipped gradients

**The fix.** Clip between backward() and step(): `loss.backward()`,
`clip_grad_norm_(model.parameters(), max_norm)`, `optimizer.step()` (with a `GradScaler`, call
`scaler.unscale_(optimizer)` before clipping). Keep parameters that are read more than once in a
list (`params = list(model.parameters())`).
""",
    heading="gradient clipping ran where it does not change the step",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]\n"
    ))

GRADIENTS_NEVER_CLEARED = _code(
    "AD209",
    "the gradients are never cleared between two step() calls: each step applies the sum of all gradients so far",
    """\
**What it means.** backward() adds into `.grad`, and `optimizer.step()` does not clear it. A
training loop without `optimizer.zero_grad()` (or `p.grad = None`) makes each backward() add
to the gradients the previous step already applied, so every step applies the sum of the
gradients of all iterations so far: the updates grow and training drifts or diverges, with no
error. autograd-doctor samples a few of the optimizer's gradients right after each of its first
steps and warns when the next backward() starts with them still there, unchanged, and they are
still there, never cleared, when the optimizer steps again. Accumulating gradients on purpose
(several backward() calls, one step(), then `zero_grad()`) clears after the step and is not
reported.

**Minimal example.**

    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        loss.backward()        # AD209: adds to the gradients the last step applied
        optimizer.step()

**The fix.** Clear once per step, before the backward() calls whose gradients it applies:
`optimizer.zero_grad()` before `loss.backward()` (or right after `optimizer.step()`).
""",
    heading="the gradients are never cleared between two step() calls",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]\n"
    ))

CLIP_BEFORE_UNSCALE = _code(
    "AD210",
    "gradients were clipped while still multiplied by the GradScaler's loss scale: the clipping limit is wrong",
    """\
**What it means.** With mixed precision, `scaler.scale(loss).backward()` leaves the gradients
multiplied by the loss scale (65536 at the start). `clip_grad_norm_(params, max_norm)` called
right after it compares the *scaled* norm with `max_norm`: it almost always clips, by a factor as
large as the scale, and `scaler.step(optimizer)` then unscales the clipped gradients, so every
update is tiny (or, with `clip_grad_value_`, the threshold means nothing). Nothing fails.
autograd-doctor records each enabled GradScaler's `unscale_()` calls and, just before each
step(), warns when the last clipping call on the optimizer's parameters ran after the backward()
and before any `unscale_()` of that optimizer, which ran only afterwards (in `scaler.step()`).

**Minimal example.**

    for x, y in batches:
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(x), y)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)   # AD210: scaled gradients
        scaler.step(optimizer)
        scaler.update()

**The fix.** Call `scaler.unscale_(optimizer)` between the backward() and the clipping, as in
PyTorch's AMP guide; `scaler.step()` then does not unscale a second time.
""",
    heading="gradients were clipped while still multiplied by the GradScaler's loss scale",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler(\"cpu\")\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]\n"
    ))

DOUBLE_UNSCALE = _code(
    "AD248",
    "the GradScaler divided the same gradients by the loss scale twice: unscale_() was given a wrapper of the optimizer",
    """\
**What it means.** `GradScaler` remembers that it unscaled an optimizer by the object passed to
`unscale_()`. A wrapper that exposes the optimizer's `param_groups` (an `AcceleratedOptimizer`, a
training framework's optimizer class) lets `scaler.unscale_(wrapper)` divide the gradients by the
loss scale, but only the wrapper is marked as unscaled: `scaler.step(inner_optimizer)` then finds
the inner optimizer not unscaled and divides the same gradients a second time. Every step applies
gradients the loss scale times too small (a clipping call in between saw the right values), and
nothing fails. autograd-doctor records each enabled scaler's `unscale_()` calls with the
parameters they divided and, before each step(), warns when the optimizer's own unscale_() came
after another object's unscale_() of its parameters since the last backward().

**Minimal example.**

    class Wrapped:
        def __init__(self, optimizer):
            self.optimizer = optimizer
            self.param_groups = optimizer.param_groups
    wrapped = Wrapped(optimizer)
    for x, y in batches:
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(x), y)).backward()
        scaler.unscale_(wrapped)          # AD248: marks the wrapper, not the optimizer
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)            # unscales the same gradients again
        scaler.update()

**The fix.** Pass `unscale_()` the optimizer that `scaler.step()` receives
(`scaler.unscale_(wrapped.optimizer)`); `scaler.step()` then does not unscale a second time.
""",
    heading="the GradScaler divided the same gradients by the loss scale twice",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler(\"cpu\")\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]\n"
    ))

PARTIAL_CLEAR = _code(
    "AD229",
    "model.zero_grad() clears only part of what the optimizer steps: the other parameters' gradients are never cleared",
    """\
**What it means.** `module.zero_grad()` clears the gradients of that module's parameters. An
optimizer given more than them (a loss module's learned centers or weights, a second network)
steps parameters the call never touches: their `.grad` keeps every gradient added to it, each
backward() adds the next one, and each `step()` applies the running sum. Nothing fails; those
parameters move further and further at each step. autograd-doctor notes, at each `model.zero_grad()`
whose caller holds an optimizer over the model's parameters, the optimizer's other parameters that
still hold gradients, and warns before a step that applies those gradients with a backward()'s
added to them.

**Minimal example.**

    criterion = CenterLoss()                  # has an nn.Parameter of its own
    optimizer = torch.optim.SGD(list(model.parameters()) + list(criterion.parameters()), lr=0.1)
    for x, y in batches:
        model.zero_grad()                     # AD229: criterion's gradients stay
        criterion(model(x), y).backward()
        optimizer.step()

**The fix.** Clear through the optimizer, `optimizer.zero_grad()`, which covers every parameter it
steps (or clear each module the optimizer holds).
""",
    heading="model.zero_grad() clears only part of what the optimizer steps",
    example_setup=(
        "class CenterLoss(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.centers = nn.Parameter(torch.randn(2, 1))\n"
        "    def forward(self, out, y):\n"
        "        return ((out - self.centers[y]) ** 2).mean()\n"
        "model = nn.Linear(3, 1)\n"
        "batches = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(3)]\n"
    ))

IDLE_LOSS_TERM = _code(
    "AD211",
    "a loss term trains nothing that steps: its gradient reaches only parameters cleared before any step",
    """\
**What it means.** Each term added into a loss sends its gradient to the parameters it was
computed from. When a term was computed from a *detached* output of the model being trained
(`d(fake.detach())` in a generator's loss), its gradient reaches only the other model's
parameters (the discriminator's), which the optimizer stepping after this backward() does not
update and whose gradients `zero_grad()` clears before their own step: the term changes the
printed loss and trains nothing. No error, and no `.grad` is None (the other terms train).
autograd-doctor reads the terms of each backward() line's loss once (names followed to their
assignments), walks each term's graph for the parameters it reaches, and, when the next
backward() starts, warns about a term that reaches none of the parameters of the optimizers
that stepped in between (while another term does) and whose parameters' gradients were all
cleared. The line to change is the `.detach()` whose tensor reaches the stepped parameters.
The same cut can take a whole loss off the model being trained: a critic's prediction detached
(`value = critic(s, a).detach()`) and compared with a target that still carries another
network's graph. The loss then reaches none of the stepped parameters, which have no gradient
to apply; it is reported when a `.detach()` in it cuts the stepped model's output (the module
called on the name's previous assignment when the name now holds the detached value).

**Minimal example.**

    fake = g(z)
    adversarial = F.mse_loss(d(fake.detach()), real_labels)   # AD211: reaches only d
    loss_g = adversarial + F.l1_loss(fake, target)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    opt_d.zero_grad()                                          # d's gradients from it: cleared
    F.mse_loss(d(target), real_labels).backward()

**The fix.** Use the tensor itself in the term that must train it (`d(fake)` for the generator's
loss); detach only in the other model's loss (`d(fake.detach())` for the discriminator's).
""",
    heading="a loss term trains nothing that steps",
    example_setup=(
        "g = nn.Linear(3, 4)\n"
        "d = nn.Linear(4, 1)\n"
        "opt_g = torch.optim.SGD(g.parameters(), lr=0.1)\n"
        "opt_d = torch.optim.SGD(d.parameters(), lr=0.1)\n"
        "z, target = torch.randn(5, 3), torch.randn(5, 4)\n"
        "real_labels = torch.ones(5, 1)\n"
    ))

CLIP_INSIDE_ACCUMULATION = _code(
    "AD212",
    "gradient clipping inside a gradient accumulation: the step applies clipped partial sums, not the clipped total",
    """\
**What it means.** With gradient accumulation, several backward() calls add their gradients into
`.grad` and one step() applies the sum. `clip_grad_norm_` (or `clip_grad_value_`) called after
each of these backward() calls clips the sum accumulated so far, and the next backward() adds to
the clipped values: the step applies clip(clip(clip(g1) + g2) + g3) + ... instead of the clipped
sum, an update that depends on how the batch was split (no error). autograd-doctor notes, when a
backward() starts, whether it adds to gradients a clipping call left untouched, and warns before
the step() that applies them. The line to change is the clipping call; the help moves it to just
before the step().

**Minimal example.**

    for i, (x, y) in enumerate(batches):
        (F.mse_loss(model(x), y) / 2).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)   # AD212: clips a partial sum
        if i % 2 == 1:
            optimizer.step()
            optimizer.zero_grad()

**The fix.** Clip once per step, after the last backward() of the accumulation and before step():
move the clipping call into the block that steps (`if (i + 1) % accumulation_steps == 0:
clip_grad_norm_(...); optimizer.step()`).
""",
    heading="gradient clipping inside a gradient accumulation",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 1) * 10) for _ in range(4)]\n"
    ))

UNTRAINED_PARAMETERS = _code(
    "AD213",
    "parameters get gradients but no optimizer holds them: they never change",
    """\
**What it means.** `step()` updates only the tensors its optimizer was given. A module built
next to the model, such as a loss with learnable parameters (center loss, an ArcFace head,
learnable weights of the terms of a multi-task loss), is often left out of
`torch.optim.SGD(model.parameters(), ...)`: its parameters get gradients at every backward()
and never change. Nothing fails, and no `.grad` is None; the loss simply trains less than it
says. autograd-doctor looks, at the first step() of each optimizer, for modules and
`nn.Parameter`s bound to names around the call whose parameters got gradients while no live
optimizer holds them, and warns at the next step() if they still have not changed. A module
counts only when it is in training mode and is called on a value computed from the trained
model (a loss of its output): a teacher or a target network called on the data, or a network
in eval mode (a perceptual loss's VGG), is left out of the optimizer on purpose; so is a
network made only of library layers (a discriminator or a reward model used without its
optimizer). A module counts when its own class declares an `nn.Parameter`; a bare
`nn.Parameter` counts when a line computes from it and the model together. Modules that a trained
module keeps in a plain list, tuple or dict (`self.blocks = []`, then `self.blocks.append(...)`)
are not registered at all: `model.parameters()` leaves them out, and the report names the line
that makes the container (the help: `nn.ModuleList` / `nn.ModuleDict`). So is the nn.Parameter
behind a module attribute stored as the output of an operation on it
(`self.a = nn.Parameter(x).squeeze()`): the report names that line, and the help moves the
operation inside (`nn.Parameter(x.squeeze())`). A parameter group built for
the optimizer and left out of the list it is built from (`head = {"params": ..., "lr": 5e-2}`, then
`AdamW([decay, no_decay])`) is named where the optimizer is built; the help gives it the group
itself, with the settings the group names.

**Minimal example.**

    model = nn.Linear(4, 2)
    centers = CenterLoss(2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)   # AD213: centers is in no optimizer
    for step in range(2):
        features = model(x)
        loss = F.cross_entropy(features, y) + centers(features, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** If they are meant to train, give the optimizer those parameters too:
`optimizer.add_param_group({"params": centers.parameters()})` after it is built (or a second
optimizer for them); if they are meant to stay fixed, say so (`requires_grad_(False)`, or a
buffer), which also saves computing their gradients.
""",
    heading="parameters get gradients but no optimizer holds them",
    example_setup=(
        "class CenterLoss(nn.Module):\n"
        "    def __init__(self, classes):\n"
        "        super().__init__()\n"
        "        self.centers = nn.Parameter(torch.randn(classes, 2))\n"
        "    def forward(self, features, labels):\n"
        "        return (features - self.centers[labels]).pow(2).sum(1).mean()\n"
        "x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))\n"
    ))

DISCARDED_GRADIENT_CLAMP = _code(
    "AD222",
    "gradients clipped with clamp() used as a statement: the clipped copy is thrown away",
    """\
**What it means.** `t.clamp(min, max)` (and `clip`, `clamp_min`, `clamp_max`) returns a clipped
copy and leaves `t` as it is; the in-place twin is `t.clamp_(min, max)`. Gradient clipping written
as `param.grad.data.clamp(-1, 1)` on a line of its own therefore changes nothing: step() applies
the unclipped gradients, the large updates the clipping was there to prevent. Nothing fails.
autograd-doctor reads, when a step() starts, the statements before it in the same function, and
reports such a clamp of a `.grad` only when a gradient the optimizer is about to apply lies outside
its bounds.

**Minimal example.**

    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    (model(x * 100) ** 2).mean().backward()
    for param in model.parameters():
        param.grad.data.clamp(-1, 1)          # AD222: the clipped copy is thrown away
    optimizer.step()

**The fix.** Clip in place: `param.grad.data.clamp_(-1, 1)`, or
`torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)`.
""",
    heading="gradients clipped with clamp() used as a statement",
    example_setup="x = torch.randn(8, 4)\n",
)

MASKED_NAN_GRADIENT = _code(
    "AD220",
    "NaN gradients although the loss is finite: a masked inf, or a square root of 0, is still differentiated",
    """\
**What it means.** `torch.where(cond, a, b)` and `masked_fill` replace values in the forward
pass only. Every element of `a` is still computed, and its backward still runs: where's
backward sends a zero gradient to the elements it did not select, and an op whose derivative
is infinite there (`sqrt` or `log` at 0 or below, a division by 0, `x ** 0.5`) multiplies that
zero by inf, which is NaN. The loss is finite, the gradients are NaN, and the next `step()`
makes the weights NaN. No error. autograd-doctor checks the first few backward() calls: when the
loss is finite, its graph holds a `where` / `masked_fill`, and a leaf's gradient has NaN or inf,
it looks in your files for the masking whose branch computes such an op (inline, or on the line
that assigned the branch) and names the op's line. Without a masking, the same 0 * inf comes from
a square root of exactly 0 (a Euclidean distance of a point to itself, a padded frame's
magnitude): its value is 0, its derivative infinite. When the graph holds one square root whose
source is found (`x.sqrt()`, `torch.sqrt(x)`, `x ** 0.5`, `x.pow(0.5)`, or `x.pow(POWER)` /
`x ** self.power` when a pow node of the graph has the exponent 0.5 at run time), its line is
named and its input clamped: `x.clamp(min=1e-30).sqrt()` changes the values by at most 1e-15 and
gives a zero gradient where `x` is 0. A selection by a mask of NaN-ness made after the op
(`log_prob[~torch.isnan(x)]`, the rows with a missing value dropped from a result computed on
them) gives 0 * NaN = NaN the same way: its line is named, and the help is to select the inputs
first.

**Minimal example.**

    for step in range(2):
        x = layer(inputs)
        out = torch.where(x > 0, torch.sqrt(x), x)   # AD220: sqrt's backward is NaN where x < 0
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Compute the op only where its result is used: give it a harmless input elsewhere
with a second `where` on the same condition, `torch.sqrt(torch.where(x > 0, x, torch.ones_like(x)))`
(for a division, the denominator: `a / torch.where(n == 0, torch.ones_like(n), n)`). The forward
values stay the same and the masked elements get a zero gradient.
""",
    heading="NaN gradients although the loss is finite",
    example_setup=(
        "layer = nn.Linear(3, 4)\n"
        "optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)\n"
        "inputs = torch.randn(8, 3)\n"
    ))

OPTIMIZER_NEVER_STEPPED = _code(
    "AD221",
    "an optimizer never steps: the gradients computed for its parameters are cleared and never applied",
    """\
**What it means.** `zero_grad()` clears the gradients a backward() left on an optimizer's
parameters and `step()` applies them. When an optimizer's `zero_grad()` runs every iteration but
its `step()` is never called (forgotten after `loss_d.backward()`, in a GAN's discriminator
update), its gradients are computed and thrown away again and again: its parameters never change,
and nothing fails. autograd-doctor remembers each `zero_grad()` call that clears gradients a
backward() computed, and, when it stops, reports an optimizer that did so at least twice without
ever stepping. The line to change is that backward(); the help adds the `step()` call after it.

**Minimal example.**

    for x, y in batches:
        opt_a.zero_grad()
        opt_b.zero_grad()
        F.mse_loss(b(a(x)), y).backward()   # AD221: opt_b.step() is never called
        opt_a.step()

**The fix.** Call the optimizer's `step()` after the backward() that computes its gradients (and
before its next `zero_grad()`): `loss.backward(); opt_a.step(); opt_b.step()`.
""",
    heading="an optimizer never steps",
    example_setup=(
        "a = nn.Linear(3, 4)\n"
        "b = nn.Linear(4, 1)\n"
        "opt_a = torch.optim.SGD(a.parameters(), lr=0.1)\n"
        "opt_b = torch.optim.SGD(b.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(3)]\n"
    ))

OPTIMIZER_REBUILT_EACH_STEP = _code(
    "AD181",
    "a stateful optimizer is built anew at every iteration: its state restarts at zero at each step",
    """\
**What it means.** Adam keeps moment estimates and a step count per parameter, SGD with momentum
a momentum buffer, RMSprop a running average. An optimizer built inside the training loop
(`opt_d = torch.optim.Adam(discriminator.parameters())` before each discriminator update) starts
that state at zero at every iteration, while the parameters carry on from the previous update:
every update is a first step (for Adam, a step of about `lr` in the sign of the gradient) and the
optimizer that was configured never runs. Nothing fails. autograd-doctor follows one parameter
per optimizer at the step hooks and, when it stops, reports a step() call at which new optimizers
took over, again and again, parameters that the previous one had stepped exactly once, held state
for, and that nothing restored since. Building again on purpose (per epoch or per task, each
optimizer taking many steps; test-time adaptation, which loads the parameters back first) is not
reported. The line to change is the construction; the help moves it before the loop.

**Minimal example.**

    for x, y in batches:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)   # AD181: a new Adam every batch
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

**The fix.** Build the optimizer once, before the loop, and keep it:
`optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)` then `for x, y in batches: ...`. To
start afresh on purpose, put the parameters back as well (`model.load_state_dict(initial)`).
""",
    heading="an optimizer built anew at every iteration",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(4)]\n"
    ))

FROZEN_OPTIMIZER_STEP = _code(
    "AD215",
    "an optimizer stepped with all its parameters frozen: the loss before it trained nothing",
    """\
**What it means.** Loops that train two models in turn (a GAN's generator and discriminator, two
discriminators) switch `requires_grad` off on the model that is not being trained. When a later
part of the loop computes a loss for that model and steps its optimizer without switching the flag
back on (a lazy regularization after the other model's phase), the loss reaches none of the
frozen parameters: they get no gradient, step() skips each of them, and the regularization trains
nothing (no error). autograd-doctor remembers which optimizers stepped with gradients and, just
before a step(), warns when a backward() ran since that optimizer's previous step while every one
of its parameters has requires_grad=False and no gradient.

**Minimal example.**

    for batch in batches:
        requires_grad(d, True)
        opt_d.zero_grad()
        d_loss(d, batch).backward()
        opt_d.step()
        requires_grad(d, False)                     # frozen for the generator's phase
        g_loss(g, d).backward()
        opt_g.step()
        opt_d.zero_grad()
        r1_penalty(d, batch).backward()             # reaches no parameter of d
        opt_d.step()                                # AD215: changes nothing

**The fix.** Switch the flag back on before the loss meant for that model:
`requires_grad(d, True)` (or `d.requires_grad_(True)`) before computing the penalty.
""",
    heading="an optimizer stepped with all its parameters frozen",
    example_setup=(
        "g = nn.Linear(2, 3)\n"
        "d = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
        "opt_g = torch.optim.SGD(g.parameters(), lr=0.1)\n"
        "opt_d = torch.optim.SGD(d.parameters(), lr=0.1)\n"
        "batches = [torch.randn(4, 3) for _ in range(2)]\n"
        "def requires_grad(model, flag):\n"
        "    for p in model.parameters():\n"
        "        p.requires_grad = flag\n"
        "def d_loss(d, batch):\n"
        "    return d(batch).mean()\n"
        "def g_loss(g, d):\n"
        "    return -d(g(torch.randn(4, 2))).mean()\n"
        "def r1_penalty(d, batch):\n"
        "    batch = batch.clone().requires_grad_(True)\n"
        "    grad, = torch.autograd.grad(d(batch).sum(), batch, create_graph=True)\n"
        "    return grad.pow(2).sum()\n"
    ))

REQUIRES_GRAD_ON_MODULE = _code(
    "AD216",
    "requires_grad was assigned on a module: it froze nothing, and the optimizer trains its parameters",
    """\
**What it means.** `requires_grad` is a flag of tensors. A module has none: `module.requires_grad
= False` adds a plain attribute to the module object and leaves every parameter's flag as it was,
so the "frozen" module gets gradients and its optimizer updates it (no error). The method
`module.requires_grad_(False)` is what sets the flag on all of a module's parameters.
autograd-doctor remembers where a bool was assigned to a module's `requires_grad` and, just
before an optimizer's step(), warns when that value is False while parameters of the module
still require grad, have a gradient and are held by that optimizer.

**Minimal example.**

    pooler = nn.Linear(3, 3)
    head = nn.Linear(3, 1)
    pooler.requires_grad = False                   # AD216: freezes nothing
    trainable = [p for m in (pooler, head) for p in m.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=0.1)
    head(pooler(x)).sum().backward()
    optimizer.step()                               # updates the pooler too

**The fix.** Call the method: `pooler.requires_grad_(False)`, or set the flag on each parameter
(`for p in pooler.parameters(): p.requires_grad = False`).
""",
    heading="requires_grad was assigned on a module",
    example_setup=(
        "x = torch.randn(4, 3)\n"
    ))

STALE_STATE_SNAPSHOT = _code(
    "AD217",
    "a state_dict() kept as a snapshot changed with the model: loading it restored nothing",
    """\
**What it means.** `model.state_dict()` returns the model's own parameters and buffers
(detached, sharing their memory), not copies. Kept as "the best weights so far", the dict
changes with every later optimizer step, and `model.load_state_dict(best)` at the end copies
the current weights onto themselves: the model keeps its last weights, not the best ones.
Nothing fails. autograd-doctor remembers each `state_dict()` call and warns at a
`load_state_dict()` of that dict into the same model when its tensors are still the model's own
and were written since the snapshot was taken. Loading into another model (a target network
synchronised from the online one) is not reported.

**Minimal example.**

    best = model.state_dict()          # AD217: the model's own tensors, not a copy
    for step in range(3):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.load_state_dict(best)        # restores nothing

**The fix.** Copy the tensors when taking the snapshot: `copy.deepcopy(model.state_dict())`,
or `{name: value.clone() for name, value in model.state_dict().items()}`.
""",
    heading="a state_dict() kept as a snapshot changed with the model",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 3)\n"
    ))

STALE_LEAF_GRADIENT = _code(
    "AD218",
    "a tensor updated by hand from its .grad, which is never cleared: each update uses the sum of all gradients",
    """\
**What it means.** backward() adds into `.grad`; it does not replace it. Gradient descent
written out by hand (`w -= lr * w.grad` under `torch.no_grad()`, an adversarial attack's
`delta.data = delta + alpha * delta.grad.sign()`) must clear the gradient after each update
(`w.grad.zero_()`, or `w.grad = None`). Without that, the n-th update applies the sum of n
gradients: training oscillates or converges more slowly, an attack steps along a running sum.
No error. autograd-doctor looks at the first few backward() calls: a tensor that the previous
backward() gave a gradient, whose values changed since, whose `.grad` is still the same
unchanged tensor, that the next backward() reaches again and that no optimizer holds (an
optimizer's parameters are AD209's).

**Minimal example.**

    for epoch in range(3):
        loss = ((x * w - y) ** 2).mean()
        loss.backward()                   # AD218: adds to the gradient the last update used
        with torch.no_grad():
            w -= 0.1 * w.grad

**The fix.** Clear the gradient after each update, `w.grad.zero_()` in the same `no_grad`
block, or `w.grad = None` before each backward().
""",
    heading="a tensor updated by hand from its .grad, which is never cleared",
    example_setup=(
        "x, y = torch.randn(8), torch.randn(8)\n"
        "w = torch.zeros(1, requires_grad=True)\n"
    ))

ZERO_DERIVATIVE_OP = _code(
    "AD219",
    "a sample (torch.normal, torch.bernoulli) or a rounded value feeds a learned layer: its backward sends zeros",
    """\
**What it means.** `torch.normal(mu, std)`, `torch.bernoulli(p)` and `torch.poisson(rate)` accept
tensors that require grad and return a result with a `grad_fn`, but their backward sends zeros:
a sample is not a differentiable function of its parameters. `round`, `floor`, `ceil`, `trunc`
and `sign` are flat almost everywhere, so their backward sends zeros too. Given to a learned
layer, such a value passes no gradient to what computed it: a VAE's encoder learns from the KL
term alone, an actor behind a critic gets nothing from the critic, the layers before a
quantisation stop learning. No error, no None gradient. autograd-doctor walks each backward()
line's graph once: a sample reached through a learned op (a layer with parameters) is reported,
and a rounding below which some parameter gets no gradient by any other path. A sample given
only to its own distribution's `log_prob` (REINFORCE) and `x - x.floor()` are not reported.

**Minimal example.**

    mu, std = encoder(x).chunk(2, dim=-1)
    z = torch.normal(mu, std.exp())      # AD219: no gradient reaches the encoder through z
    loss = F.mse_loss(decoder(z), x)
    loss.backward()

**The fix.** Reparameterise: `z = mu + std * torch.randn_like(mu)` draws the same sample with a
gradient for `mu` and `std` (or `torch.distributions.Normal(mu, std).rsample()`). For a
Bernoulli draw or a rounding, a straight-through estimator keeps the forward value and passes
the gradient through: `q = x.round().detach() + (x - x.detach())`; a relaxed distribution or a
score-function estimator are the other ways.
""",
    heading="a sample or a rounded value feeds a learned layer",
    example_setup=(
        "encoder, decoder = nn.Linear(4, 4), nn.Linear(2, 4)\n"
        "x = torch.randn(8, 4)\n"
    ))

SELF_COMPARED_TERM = _code(
    "AD224",
    "a loss term compares a value with itself: it is a constant and trains nothing",
    """\
**What it means.** A divergence or a distance between a value and itself is a constant (zero
for `kl_div`, `mse_loss`, `l1_loss`, `torch.dist`; the entropy for `cross_entropy`). Added to the
loss it changes no gradient: the term trains nothing and no error is raised. It is almost always
a slip: a distillation loss given the teacher's logits twice instead of the student's and the
teacher's, a reconstruction loss given the target twice. autograd-doctor reads the loss of each
backward() line once, follows its added terms to their assignments, and reports a call of one of
torch's losses or distances whose two compared arguments are the same expression made of names
and torch's deterministic functions. A model called twice (`kl(model(x), model(x))` under
dropout, R-Drop's consistency term) gives two different values and is not reported.

**Minimal example.**

    with torch.no_grad():
        teacher_logits = teacher(x)
    student_logits = student(x)
    kl = F.kl_div(F.log_softmax(teacher_logits, -1), F.log_softmax(teacher_logits, -1),  # AD224
                  log_target=True, reduction="batchmean")
    loss = F.cross_entropy(student_logits, y) + kl
    loss.backward()

**The fix.** Give the loss the prediction it should train as one of the two arguments
(`F.log_softmax(student_logits, -1)` above).
""",
    heading="a loss term compares a value with itself",
    example_setup=(
        "teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)\n"
        "x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
    ))

RAW_SCORES_AS_LOG_PROBABILITIES = _code(
    "AD225",
    "nll_loss or ctc_loss given a layer's raw scores: they expect log-probabilities",
    """\
**What it means.** `F.nll_loss` / `nn.NLLLoss` and `F.ctc_loss` / `nn.CTCLoss` read their input
as log-probabilities, the output of `log_softmax`, and do not normalise it. Given a layer's raw
scores, NLL is `-score[target]`, which the network lowers without bound by growing one score,
and CTC's backward, which assumes normalised input, gives gradients of no loss the model
computes. The program runs and the loss goes down; nothing is raised. autograd-doctor walks
each backward() line's graph once and reports such a loss whose input comes, through views
only, straight from a Linear's or a convolution's output. Log-probabilities computed another
way (`x - x.logsumexp(1, keepdim=True)`, `torch.log(probs)`) are not reported.

**Minimal example.**

    scores = classifier(x)                 # a Linear: raw scores
    loss = F.nll_loss(scores, y)           # AD225: NLL of raw scores
    loss.backward()

**The fix.** `F.nll_loss(torch.log_softmax(scores, dim=1), y)`, or `F.cross_entropy(scores, y)`,
which applies log_softmax itself; for CTC, `torch.log_softmax(scores, dim=-1)` (its input is
time, batch, classes).
""",
    heading="nll_loss or ctc_loss given raw scores",
    example_setup=(
        "classifier = nn.Linear(4, 3)\n"
        "x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
    ))

UNDETACHED_SCORE_FUNCTION_WEIGHT = _code(
    "AD226",
    "a policy-gradient term's weight is not detached: the critic learns from the log-probability's gradient",
    """\
**What it means.** The score-function (REINFORCE) estimator is `weight * log_prob(action)`, with
the weight (a return minus a baseline, an advantage) held constant: only the log-probability is
differentiated. When the baseline comes from a critic and is not detached, backward() also sends
the policy term's gradient, `log_prob * dloss`, into the critic: it learns to make the product
small instead of predicting the return, and the actor's advantage estimates go wrong with it.
Nothing is raised; training is unstable or slow. autograd-doctor looks at each backward() line's
graph once for a product of a categorical log-probability (`log_softmax`, `Categorical.log_prob`,
through sums, gathers and stacks) and a factor that reaches a learned layer's weight the
log-probability does not depend on, when one optimizer holds both (a critic with its own
optimizer, whose gradients are cleared before its own loss, is not harmed). An entropy term
(`probs * log_probs`) or a scalar temperature (`alpha * log_probs`) is not reported.

**Minimal example.**

    dist = torch.distributions.Categorical(logits=actor(x))
    actions = dist.sample()
    values = critic(x).squeeze(-1)
    policy_loss = -((returns - values) * dist.log_prob(actions)).mean()   # AD226
    loss = policy_loss + F.mse_loss(values, returns)
    loss.backward()

**The fix.** Detach the baseline in the policy term: `(returns - values.detach()) *
dist.log_prob(actions)`. The critic keeps its own loss, `F.mse_loss(values, returns)`.
""",
    heading="a policy-gradient term's weight is not detached",
    example_setup=(
        "actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)\n"
        "optimizer = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=0.1)\n"
        "x, returns = torch.randn(8, 4), torch.randn(8)\n"
    ))

UNDETACHED_SIAMESE_TARGET = _code(
    "AD227",
    "a prediction is compared with a target the same network computed, without a stop-gradient",
    """\
**What it means.** SimSiam, BYOL-style and latent-prediction objectives compare a prediction,
`p = predictor(projector(encoder(x1)))`, with a target from the same network,
`z = projector(encoder(x2))`, and hold the target constant: `D(p, z.detach())`. Without the
stop-gradient, backward() also moves the target towards the prediction; the two sides meet
halfway and the network can lower the loss by giving every input the same output
(representation collapse). Nothing is raised. autograd-doctor reads each backward() line's loss
once and reports a distance or similarity (`F.cosine_similarity`, `F.mse_loss`, a loss module, or
a short function of the program around one) of two names whose tensors have a graph, where the
target's learned parameters are a strict part of the prediction's and one optimizer holds both.
Two views through the same network (SimCLR, a consistency term) are not reported.

The same holds for a bootstrapped target in Q-learning or TD learning without a target network:
`F.mse_loss(q_net(s).gather(1, a), r + gamma * q_net(s2).max(1).values)`. Both sides depend on the
same parameters; the target is recognised by its graph, a reward without a graph plus a product
with one (the discounted next value). Without a stop-gradient, backward() also moves Q(s')
towards Q(s): a residual gradient, not the update the algorithm means.

And for a loss used as a target: a head that predicts each pixel's or sample's loss (a learned
uncertainty, a loss-prediction module) regressed onto `F.cross_entropy(logits, y,
reduction="none")` of the same forward pass. The target's graph starts at a loss function's
node; without `.detach()`, the auxiliary loss also moves the task's predictions so that their loss
matches the head's guess.

**Minimal example.**

    z1, z2 = projector(x1), projector(x2)
    p1 = predictor(z1)
    loss = -F.cosine_similarity(p1, z2).mean()   # AD227: z2 not detached
    loss.backward()

**The fix.** Detach the target where it is compared: `F.cosine_similarity(p1, z2.detach())`
(or return `z.detach()` from the model, as SimSiam's reference code does).
""",
    heading="a prediction compared with a target without a stop-gradient",
    example_setup=(
        "projector, predictor = nn.Linear(4, 4), nn.Linear(4, 4)\n"
        "optimizer = torch.optim.SGD([*projector.parameters(), *predictor.parameters()], lr=0.1)\n"
        "x1, x2 = torch.randn(8, 4), torch.randn(8, 4)\n"
    ))

MODULE_BACKWARD_NEVER_CALLED = _code(
    "AD223",
    "a module's backward() method is never called by autograd",
    """\
**What it means.** A class derived from `nn.Module` defines `backward(self, grad_output)`,
meant to change the gradient that flows through it (a gradient reversal layer, a
straight-through estimator, a gradient clip). Autograd calls `backward` only on a
`torch.autograd.Function`; a module's gradient is the derivative of what its `forward()`
recorded, and the method is never called. No error: a gradient reversal layer is the identity
in both directions, and the adversarial branch trains the encoder to help it. autograd-doctor
reports it after one of the first backward() calls that went through such a module's result.
A `backward(self, loss)` helper that calls `loss.backward()` itself is not this.

**Minimal example.**

    class GradReverse(nn.Module):
        def forward(self, x):
            return x
        def backward(self, grad_output):         # AD223: never called
            return -grad_output
    x = torch.randn(3, requires_grad=True)
    GradReverse()(x * 2).sum().backward()

**The fix.** Write it as a `torch.autograd.Function` (static `forward(ctx, x)` returning
`x.view_as(x)`, static `backward(ctx, grad_output)`) and call it with `.apply(x)`, or let the
module's `forward()` return such a Function's `.apply(x)`.
""",
    heading="a module's backward() method is never called")

STALE_GRAPH_VALUE = _code(
    "AD228",
    "a tensor computed from parameters before an optimizer step is used after it: it holds their old values",
    """\
**What it means.** A value derived from a parameter is computed once (in `__init__`, or before
the training loop) and used in every loss: `self.sigma = torch.log1p(torch.exp(self.rho))`. The
optimizer moves the parameter, but the derived tensor keeps the value it had when it was made,
and its graph, kept alive, sends gradients computed at the old values. PyTorch usually stops the
second backward() with "Trying to backward through the graph a second time"; `retain_graph=True`,
added to get past it, turns the bug silent. autograd-doctor looks, on the first backward() calls
after an optimizer step, for a name of the backward() frame or a plain tensor attribute of a
module whose graph node is in the loss's graph, was made before the step (autograd's sequence
numbers tell), and reaches a parameter the step changed.

**Minimal example.**

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_scale = nn.Parameter(torch.zeros(3))
            self.scale = self.log_scale.exp()          # AD228: computed once
        def forward(self, x):
            return x * self.scale
    model = Scaled()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(4, 3)).pow(2).sum()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()

**The fix.** Compute the value from the parameter where it is used, so it follows every step:
a property (`@property def scale(self): return self.log_scale.exp()`) or a line inside
`forward`; then `retain_graph=True` is not needed.
""",
    heading="a tensor computed before an optimizer step is used after it")

GRADIENTS_LEFT_BY_ANOTHER_LOSS = _code(
    "AD230",
    "an optimizer steps on gradients another optimizer's loss left on its parameters",
    """\
**What it means.** One backward() reaches the parameters of two optimizers: a generator's
adversarial loss is computed through the discriminator, an actor's loss through the critic. The
generator's optimizer steps on it; the discriminator's gradients from that loss stay in `.grad`.
If the discriminator's optimizer does not clear them before its own backward(), that backward()
adds to them and the discriminator's step follows the generator's objective too: it is pushed to
call the generated samples real. Nothing fails and the losses look plausible. autograd-doctor
samples a few gradients of each optimizer at the start of each backward() and after each step
during the first steps, and warns when an optimizer steps on gradients that a backward() filled
for it and another optimizer, that the other optimizer stepped on, and that its own backward()
then added to without a clear in between.

**Minimal example.**

    for x, target in batches:
        fake = generator(x)
        loss_g = discriminator(fake).neg().mean()
        loss_g.backward()                          # also fills the discriminator's gradients
        opt_g.step()
        opt_g.zero_grad()
        loss_d = discriminator(target).neg().mean() + discriminator(fake.detach()).mean()
        loss_d.backward()                          # AD230: adds to what loss_g left
        opt_d.step()
        opt_d.zero_grad()

**The fix.** Clear the optimizer's gradients before the backward() whose gradients its step
should apply (`opt_d.zero_grad()` before `loss_d.backward()`), or turn `requires_grad` off for
the discriminator's parameters while the generator's loss runs.
""",
    heading="an optimizer steps on gradients another optimizer's loss left",
    example_setup=(
        "generator, discriminator = nn.Linear(3, 3), nn.Linear(3, 1)\n"
        "opt_g = torch.optim.SGD(generator.parameters(), lr=0.1)\n"
        "opt_d = torch.optim.SGD(discriminator.parameters(), lr=0.1)\n"
        "batches = [(torch.randn(4, 3), torch.randn(4, 3)) for _ in range(3)]\n"
    ))

FUNCTION_WITHOUT_SETUP_CONTEXT = _code(
    "AD231",
    "a custom autograd.Function with forward(ctx, ...) is used under a torch.func transform",
    """\
**What it means.** `torch.func` transforms (`grad`, `vmap`, `jacrev`, `vjp`, `jvp`) run a custom
`torch.autograd.Function` only when its forward does not take `ctx`: the computation goes in
`forward(x, ...)` and what backward needs is saved in a separate
`setup_context(ctx, inputs, output)` staticmethod, which the transforms call at each of their
levels. A Function written the older way, `forward(ctx, x, ...)`, works with `backward()` but
under a transform PyTorch raises "In order to use an autograd.Function with functorch transforms
(vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod". The traceback
ends in `torch/_functorch`, not at the Function.

**Minimal example.**

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):            # AD231: forward takes ctx
            ctx.save_for_backward(x)
            return x ** 3
        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * grad_output

    torch.func.grad(lambda x: Cube.apply(x).sum())(torch.randn(3))

**The fix.** Split forward: `forward(x)` computes and returns the output; the `ctx` lines move to
`@staticmethod def setup_context(ctx, inputs, output)`, with `x, = inputs` (and the output under
its forward name). autograd-doctor writes that change when every `ctx` line of forward reads
only forward's arguments and the tensor it returns; otherwise (an intermediate saved from inside
forward) return that intermediate as an extra output, marked non-differentiable, so that
setup_context can save it.
""",
    heading="an autograd.Function with forward(ctx, ...) under torch.func")

FUNCTION_WITHOUT_VMAP_RULE = _code(
    "AD232",
    "a custom autograd.Function without a vmap rule is mapped by vmap",
    """\
**What it means.** `torch.func.vmap` (and `jacrev`/`jacfwd`, which use it) runs a custom
`torch.autograd.Function` only when the Function says how to batch it: a `vmap` staticmethod, or
the class attribute `generate_vmap_rule = True`, which tells PyTorch to batch `forward`,
`setup_context` and `backward` by running them under vmap, as it does any PyTorch code. Without
either, PyTorch raises "You tried to vmap over Name, but it does not have vmap support. Please
override and implement the vmap staticmethod or set generate_vmap_rule=True".

**Minimal example.**

    class Double(torch.autograd.Function):    # AD232: no vmap rule
        @staticmethod
        def forward(x):
            return x * 2
        @staticmethod
        def setup_context(ctx, inputs, output):
            pass
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    torch.func.vmap(Double.apply)(torch.randn(4, 3))

**The fix.** Add `generate_vmap_rule = True` to the class when its staticmethods compute with
PyTorch operations only (autograd-doctor offers it then: no `.numpy()`, `.item()`, `.tolist()` or
NumPy call in the class); a Function that leaves PyTorch (NumPy, a C extension) needs a
hand-written `vmap` staticmethod. `generate_vmap_rule` needs forward without `ctx` (AD231).
""",
    heading="an autograd.Function without a vmap rule under vmap")

CHECKPOINT_UNDER_FUNC_TRANSFORM = _code(
    "AD233",
    "saved-tensor hooks (activation checkpointing, save_on_cpu) inside a function torch.func.grad, vjp or jacrev "
    "differentiates",
    """\
**What it means.** The non-reentrant `torch.utils.checkpoint.checkpoint` works through saved-tensor
hooks: it replaces what autograd saves by a way to recompute it. `torch.func.grad`, `vjp`,
`jacrev` and `hessian` do not support those hooks: a checkpoint reached inside the function they
differentiate (often in a module's forward, called through `torch.func.functional_call`) raises
"torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks". The traceback
shows the checkpoint call among PyTorch's frames, not why it fails.

**Minimal example.**

    from torch.utils.checkpoint import checkpoint
    block = nn.Linear(3, 3)
    def loss_of(x):
        return checkpoint(block, x, use_reentrant=False).sum()   # AD233
    torch.func.grad(loss_of)(torch.randn(3))

**The fix.** Call the checkpointed function directly (`block(x)`): the values and the gradients
are the same; only the memory checkpointing saved is spent. If the memory is needed, compute the
gradients with `backward()` or `torch.autograd.grad` outside any torch.func transform, where the
checkpoint works.

The same message comes from a transform called inside a `with torch.autograd.graph.save_on_cpu():`
(or `saved_tensors_hooks(...)`) block, with no checkpoint at all: autograd-doctor then names the
`with` line, and, for `save_on_cpu` (which keeps the same values on the CPU) when the transform's
statement is in the block's own body, moves the block's statements up to it before the block.
""",
    heading="activation checkpointing under torch.func.grad")

BUFFER_MUTATED_UNDER_FUNC_TRANSFORM = _code(
    "AD178",
    "a module's buffer updated in place inside a function torch.func.grad, vjp or jacrev differentiates",
    """\
**What it means.** `torch.func.grad`, `vjp`, `jvp`, `jacrev` and `hessian` refuse an in-place
write, inside the function they transform, into a tensor that function did not receive as an
input: "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call
in-place operation (aten::add_.Tensor) that would mutate a captured Tensor". The usual writer is
a batch norm layer in training mode: its forward updates `running_mean`, `running_var` and
`num_batches_tracked` in place, and through `torch.func.functional_call` those buffers are the
module's own, captured from outside (MAML's inner step, per-example gradients). The traceback
ends inside `torch.nn.functional.batch_norm`; autograd-doctor names the layer's construction in
your file.

**Minimal example.**

    net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))   # AD178
    params = dict(net.named_parameters())
    def loss_of(p):
        return torch.func.functional_call(net, p, (torch.randn(5, 4),)).pow(2).mean()
    torch.func.grad(loss_of)(params)

**The fix.** Build the layer with `track_running_stats=False` when the program never evaluates
it in `eval()` mode with running statistics (functorch's own MAML example does): in training mode
the layer normalises with the batch's statistics either way, so the values and gradients are the
same. If the running statistics are needed, pass the buffers to the transformed function with
`functional_call(net, (params, buffers), ...)` from `torch.func.stack_module_state` or
`dict(net.named_buffers())` cloned, or update them outside the transform.
""",
    heading="a batch norm's running statistics updated under torch.func.grad")

ONCE_DIFFERENTIABLE_TWICE = _code(
    "AD179",
    "a custom autograd.Function marked @once_differentiable differentiated twice",
    """\
**What it means.** `@once_differentiable` on a custom `autograd.Function`'s backward runs it
without recording a graph and forbids differentiating it: when a second derivative passes
through the Function (a gradient penalty, MAML's inner step taken with `create_graph=True`, a
Hessian), the backward() that needs it raises "trying to differentiate twice a function that was
marked with @once_differentiable". The traceback shows the outer backward() only, not which
Function, nor where the decorator is.

**Minimal example.**

    from torch.autograd.function import once_differentiable
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x
        @staticmethod
        @once_differentiable                      # AD179
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    (g,) = torch.autograd.grad((Square.apply(x) * w).sum(), x, create_graph=True)
    g.sum().backward()

**The fix.** When backward computes its result with PyTorch operations, remove the decorator:
autograd then records backward's operations and differentiates them, and the first derivative is
unchanged. When backward calls code autograd cannot see (NumPy, a custom kernel), write its
derivative as another Function, or drop the second-order terms on purpose (a first-order method),
which changes the result.
""",
    heading="a @once_differentiable backward differentiated twice")

BACKWARD_WITHOUT_DERIVATIVE = _code(
    "AD184",
    "a second derivative through an operation whose backward PyTorch cannot differentiate",
    """\
**What it means.** A loss on a gradient (force matching, a gradient penalty, a physics residual,
Sobolev training) needs the derivative of a backward formula: the first gradient is taken with
`create_graph=True`, and the outer backward() differentiates the backward operations it
recorded. A few of PyTorch's backward operations have no derivative of their own, and the outer
backward() raises "the derivative for '_cdist_backward' is not implemented", naming the backward
operation, not the forward call in your code that recorded it (here `torch.cdist`).

**Minimal example.**

    a = torch.randn(4, 2, requires_grad=True)
    b = torch.randn(3, 2) + 5.0
    distances = torch.cdist(a, b)            # AD184: cdist's backward has no derivative
    (g,) = torch.autograd.grad(distances.sum(), a, create_graph=True)
    g.pow(2).sum().backward()

**The fix.** Compute the operation another way whose backward is made of differentiable
operations: for Euclidean distances, `torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist")`
(the same distances, through matrix products) or `(a[:, None] - b[None]).norm(dim=-1)`. For
another operation, write it with elementary tensor operations, or, if the second-order terms are
not wanted, take the first gradient without `create_graph=True` (which changes the result).
""",
    heading="a second derivative through a backward PyTorch cannot differentiate")

AUX_NOT_A_PAIR = _code(
    "AD234",
    "a function differentiated with has_aux=True does not return the pair (output, aux)",
    """\
**What it means.** `torch.func.grad(f, has_aux=True)` (and `grad_and_value`, `vjp`, `jacrev`
with `has_aux=True`) differentiates the first of exactly two things `f` returns and hands the
second back untouched. A function that returns the loss and several auxiliary values side by side
(`return loss, logits, accuracy`), or the loss alone, raises "grad_and_value(f)(*args): output of
function f should be a tuple: (output, aux) if has_aux is True". The traceback ends inside
torch.func; the `return` to change is in your function.

**Minimal example.**

    def loss_and_metrics(w):
        logits = x @ w
        loss = logits.pow(2).mean()
        return loss, logits, logits.argmax(dim=1)   # AD234: three values, not (output, aux)

    torch.func.grad(loss_and_metrics, has_aux=True)(w)

**The fix.** Gather the auxiliary values into one: `return loss, (logits, predicted)`; the call
then returns `(gradient, (logits, predicted))`. A function with no auxiliary value is called
without `has_aux=True`.
""",
    heading="has_aux=True and a function that does not return (output, aux)",
    example_setup="x = torch.randn(4, 3)\nw = torch.randn(3, 2)\n")

STRICT_OUTPUT_WITHOUT_GRAD = _code(
    "AD235",
    "strict=True: the function's output does not depend on its input through autograd",
    """\
**What it means.** `torch.autograd.functional.jacobian` (and `hessian`, `vjp`, `jvp`, `hvp`,
`vhp`) with `strict=True` checks that every output of the function was computed from the inputs
by operations autograd records; when one was not, it raises "Output 0 of the user-provided
function does not require gradients. The outputs must be computed in a differentiable manner
from the input when running in strict mode". Without `strict=True` the same function gives a
Jacobian of zeros, silently. The usual cut is `torch.tensor([a, b])` of computed values, which
copies their numbers into a new tensor without their graph; `.detach()`, `.item()`, NumPy and
`torch.no_grad()` cut it too.

**Minimal example.**

    def polar(p):
        radius = p.pow(2).sum().sqrt()
        angle = torch.atan2(p[1], p[0])
        return torch.tensor([radius, angle])   # AD235: copies the values, not the graph

    torch.autograd.functional.jacobian(polar, torch.tensor([1.0, 2.0]), strict=True)

**The fix.** Build the vector with `torch.stack([radius, angle])`, which keeps each element's
graph (the same values when the elements are single numbers); autograd-doctor offers it when the
function returns `torch.tensor([...])` of computed values, and otherwise points at the `return`.
""",
    heading="strict=True and an output independent of the input")

TANGENT_OF_ANOTHER_SIZE = _code(
    "AD236",
    "a forward-mode tangent has another size than its primal",
    """\
**What it means.** Forward-mode AD (`torch.func.jvp`, `jacfwd`, `torch.autograd.forward_ad.make_dual`)
pushes one tangent per input through the function: the direction in which that input moves,
element by element. The tangent must have exactly the input's size; PyTorch does not broadcast it
and raises "Trying to set a forward gradient that has a different size than that of the original
Tensor, this is not supported. Tensor is of size [4, 3] while the given forward gradient is of
size [3]". The usual cause is a direction written for one example and a batch as the primal.

**Minimal example.**

    batch = torch.randn(4, 3)
    direction = torch.tensor([1.0, 0.0, 0.0])
    torch.func.jvp(torch.tanh, (batch,), (direction,))   # AD236: [3] for a [4, 3] primal

**The fix.** Give the tangent the primal's shape: `direction.expand_as(batch)` when the same
direction is meant for every example (autograd-doctor offers it when the tangent broadcasts to the
primal), `tangent.view_as(x)` when a flat tangent holds the same number of elements; for one
direction per example, map `jvp` with `vmap`.
""",
    heading="a forward-mode tangent of another size than its primal")

FUNCTION_WITHOUT_JVP = _code(
    "AD237",
    "a custom autograd.Function without a jvp staticmethod is used with forward-mode AD",
    """\
**What it means.** Forward-mode AD (`torch.func.jvp`, `jacfwd`, `hessian`, dual tensors of
`torch.autograd.forward_ad`) pushes a tangent through each operation. For a custom
`torch.autograd.Function` it calls the Function's own `jvp` staticmethod, which PyTorch cannot
derive from `backward`: without one it raises "You must implement the jvp function for custom
autograd.Function to use it with forward mode AD" (NotImplementedError). The traceback ends in
`Function.apply`; the class to complete is yours.

**Minimal example.**

    class Square(torch.autograd.Function):    # AD237: no jvp staticmethod
        @staticmethod
        def forward(x):
            return x * x
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    torch.func.jvp(Square.apply, (torch.randn(3),), (torch.ones(3),))

**The fix.** Add `@staticmethod def jvp(ctx, *tangents)` returning the output's tangent, the
Jacobian times the inputs' tangents (for an elementwise function, the tangent times the derivative
`backward` multiplies `grad_output` by), and save what it reads with `ctx.save_for_forward(...)` in
`setup_context`. Reverse mode (`jacrev`, `vjp`) uses `backward` and needs no `jvp`. autograd-doctor
gives advice only: the Jacobian is the Function's own.
""",
    heading="an autograd.Function without jvp under forward-mode AD")

DUAL_TENSOR_WITHOUT_LEVEL = _code(
    "AD238",
    "make_dual() called outside a `with forward_ad.dual_level():` block",
    """\
**What it means.** `torch.autograd.forward_ad.make_dual(x, tangent)` attaches the tangent to the
current forward-AD level, which exists only inside `with forward_ad.dual_level():`. Called outside,
it raises "Trying to create a dual Tensor for forward AD but no level exists, make sure to
enter_dual_level() first". The block must also hold the `unpack_dual()` that reads the tangent: the
tangents are dropped when the level exits.

**Minimal example.**

    import torch.autograd.forward_ad as fwAD
    dual = fwAD.make_dual(x, direction)        # AD238: no dual_level() around it
    out, tangent = fwAD.unpack_dual(torch.tanh(dual))

**The fix.** Put the statements from `make_dual` to the last `unpack_dual` in one
`with fwAD.dual_level():` block; autograd-doctor writes that block when both are in the same
block of your code.
""",
    heading="make_dual outside dual_level()",
    example_setup="x = torch.randn(3)\ndirection = torch.ones(3)\n")

INTEGER_TANGENT = _code(
    "AD239",
    "a forward-mode tangent is an integer tensor",
    """\
**What it means.** A tangent is the direction in which its primal moves; forward-mode AD
(`torch.func.jvp`, `forward_ad.make_dual`) takes it only floating point or complex, and raises
"Expected tangent to be floating point or complex, but got: torch.int64" for an integer or boolean
tensor. The usual cause is a direction built from integers: `F.one_hot(...)` (which returns
int64), `torch.tensor([1, 0, 0])`, a comparison.

**Minimal example.**

    x = torch.randn(3)
    direction = torch.tensor([1, 0, 0])
    torch.func.jvp(torch.sin, (x,), (direction,))   # AD239: an int64 tangent

**The fix.** Give the tangent its primal's dtype: `direction.to(x.dtype)` (the same direction,
as floating-point numbers); autograd-doctor writes it into the call when the tangent is a name.
""",
    heading="an integer forward-mode tangent")

OPTIMIZER_GROUP_FROM_SPENT_ITERATOR = _code(
    "AD242",
    "an optimizer parameter group built from an iterator an earlier optimizer read to the end: the group is empty",
    """\
**What it means.** `model.parameters()`, `filter(...)`, `map(...)` and generator expressions are
iterators: they can be read once. An optimizer's constructor reads the iterator it is given into a
list. Built again from the same object (an optimizer rebuilt every epoch to change the learning
rate, a second optimizer over the same selection), the new optimizer gets an empty group: those
parameters keep getting gradients and are never stepped by it. Nothing fails: torch refuses an
optimizer without parameters, not an empty group. autograd-doctor watches the groups optimizers
are built with and reports, when it stops, a group given the very iterator object an earlier group
got its tensors from, and which got none. A fresh iterator that selects nothing (a no-decay group
on a model without biases) is not reported. The line to change is where the iterator is made.

**Minimal example.**

    head = filter(lambda p: p.ndim > 1, model.parameters())
    optimizer = torch.optim.SGD([{"params": head}], lr=0.1)
    for epoch in range(2):
        F.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
        optimizer = torch.optim.SGD([{"params": head}], lr=0.05)   # AD242: head is used up

**The fix.** Make the selection a list where it is made:
`head = list(filter(lambda p: p.ndim > 1, model.parameters()))`; autograd-doctor writes it there
when the group's parameters are a name assigned on one line.
""",
    heading="a parameter group from a used-up iterator",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "x, y = torch.randn(5, 3), torch.randn(5, 1)\n"
    ))

ADAPTED_WEIGHT_UNUSED = _code(
    "AD243",
    "an adapted (fast) weight is unused: the forward reads the parameter itself, so that layer is never adapted",
    """\
**What it means.** MAML-style inner loops compute adapted weights `w' = w - lr * g` and run the
network with them (a `params` dict passed to each layer). A layer whose forward ignores what it is
given and reads `self.weight` never uses `w'`: `torch.autograd.grad(loss, fast_weights,
allow_unused=True)` returns None for it, the inner loop keeps it as it is, the layer is never
adapted and the meta-gradient misses its inner-loop path. Nothing fails. autograd-doctor reports
an autograd.grad line whose earlier call returned a gradient for the parameter itself and that now
returns None for an update computed from it, and names the layer's forward statement that reads
the parameter.

**Minimal example.**

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3))

        def forward(self, x, params=None):
            return x * self.weight                 # AD243: ignores params

    layer = Scale()
    fast = {"weight": layer.weight}
    for step in range(2):
        loss = (layer(x, fast) ** 2).sum()
        (g,) = torch.autograd.grad(loss, [fast["weight"]], create_graph=True, allow_unused=True)
        fast = {"weight": fast["weight"] - 0.1 * g if g is not None else fast["weight"]}

**The fix.** Use the weights the forward is given:
`weight = self.weight if params is None else params["weight"]`.
""",
    heading="an adapted weight the forward does not use",
    example_setup="x = torch.randn(4, 3)\n")

# ---- AD3xx: gradient-path and copy mistakes -------------------------------------------

GRADIENT_PATH_CUT = _code(
    "AD301",
    "the gradient path from the loss was cut",
    """\
**What it means.** A parameter ended backward with `.grad is None`, or backward failed
with "element 0 of tensors does not require grad and does not have a grad_fn": the
loss does not depend on the parameter through operations autograd recorded. Common
causes: `detach()`, `.data`, a `torch.no_grad()` block, `torch.tensor(...)` or a NumPy
round trip, `argmax` and other integer ops, `requires_grad_(False)`, a distribution's `sample()`
(it draws under no_grad; `rsample()` draws with gradients), also inside a module's forward: when
the statement that calls a module is where the path stops, its forward is read for such a
`sample()`, and for a write through `.data` (`x.data[i] = y`: the copy is not recorded, so what
`y` was computed from gets no gradient through it; the help writes through the tensors).

**Minimal example.**

    features = encoder(x).detach()     # AD301: the path to encoder is cut here
    loss = head(features).mean()
    loss.backward()                    # encoder's parameters end with .grad None

    total = torch.tensor([l1.item(), l2.item()]).sum()
    total.backward()   # RuntimeError: element 0 of tensors does not require grad ...

**The fix.** Keep the computation in torch ops under grad mode; use `torch.stack`
instead of `torch.tensor([...])`; remove the `detach()` on the path.

A model cut off as a whole (`encoder` above, while `head` trains) is reported from the second
backward() on, and only when an optimizer that holds it also holds parameters the loss reached:
its step() then trains `head` and leaves `encoder` where it started. A target network or a
teacher detached on purpose (held by no optimizer), or a GAN's generator detached in the
discriminator's loss (held by its own optimizer, stepped after its own loss) is not reported.

A reentrant activation checkpoint (`checkpoint(block, x, use_reentrant=True)`,
`checkpoint_sequential`) runs its function under no_grad and connects the result to the graph
only through its tensor inputs: when none of them requires grad (the data, frozen embeddings),
the block's parameters get no gradient while the rest of the model trains, and PyTorch only
warns. autograd-doctor remembers such a call (made with gradients on, by a function whose
parameters require grad) and reports it after the next backward() that does not reach those
parameters; the fix is `use_reentrant=False`.

Gradients may also be off because a caller turned them off before your function ran: a host
application's `torch.set_grad_enabled(False)`, an optimizer whose `step(closure)` is decorated with
`@torch.no_grad()` and runs the closure inside, a caller's `with torch.no_grad():`. When the
function that computes the loss and calls backward() turns nothing off itself, the help decorates
it with `@torch.enable_grad()` (what PyTorch's own optimizers do around a closure): gradients are
on in its body, and the caller gets its own mode back when it returns.
""",
    example_setup=(
        "encoder = nn.Linear(3, 3)\n"
        "head = nn.Linear(3, 1)\n"
        "x = torch.randn(2, 3)\n"
        "l1 = head(encoder(x)).sum()\n"
        "l2 = head(x).sum()\n"
    ))

BACKWARD_TWICE = _code(
    "AD302",
    "backward() went through a graph that an earlier backward() already freed",
    """\
**What it means.** backward() frees the saved tensors of the graph it went through.
A second backward() through any part of that graph fails with "Trying to backward
through the graph a second time". The usual cause is a tensor (an RNN hidden state,
a running total) carried across iterations that still holds the old graph.

**Minimal example.**

    h = torch.zeros(1, 8)
    for x in batches:
        h = torch.tanh(cell(x) + h)    # h still points into last iteration's graph
        loss = h.sum()
        loss.backward()                # AD302 on the second iteration

**The fix.** Detach the carried tensor at the iteration boundary (`h = h.detach()`), or
pass `retain_graph=True` to the first backward() if both backward passes are meant.
""",
    example_setup=(
        "cell = nn.Linear(3, 8)\n"
        "batches = [torch.randn(1, 3) for _ in range(2)]\n"
    ))

DEEPCOPY_NON_LEAF = _code(
    "AD303",
    "copy.deepcopy of a tensor that is not a graph leaf",
    """\
**What it means.** `copy.deepcopy` only supports tensors created by the user (graph
leaves): "Only Tensors created explicitly by the user (graph leaves) support the
deepcopy protocol at the moment." A module or container holding a non-leaf tensor
(a cached activation) fails to copy.

**Minimal example.**

    model.cache = model(x)             # a non-leaf activation kept on the module
    copy.deepcopy(model)               # AD303: RuntimeError naming model.cache

**The fix.** Store `t.detach()` (or `t.detach().clone()`) in the object, or copy the
tensor with `t.detach().clone()` instead of `deepcopy`.
""",
    example_setup=(
        "model = nn.Linear(3, 3)\n"
        "x = torch.randn(2, 3)\n"
    ))

TENSOR_COPY_CUTS_GRAPH = _code(
    "AD304",
    "torch.tensor() copied values out of the graph",
    """\
**What it means.** `torch.tensor(t)` and `torch.tensor([loss1, loss2])` copy the values
into a new leaf tensor with no gradient history: gradients stop there. It is reported when a
backward() has the copy as a term of its loss (the copy then trains nothing); a copy made for
an expected value, a logged figure, a metric or a constant target is what its author wanted.

**Minimal example.**

    total = torch.tensor([loss1, loss2]).sum()   # AD304: a new leaf, no history
    total.backward()                             # fails: no grad_fn

**The fix.** `torch.stack([loss1, loss2])` keeps the graph; `t.detach().clone()` is the
explicit copy when you want none.
""",
    example_setup=(
        "w = torch.randn(3, requires_grad=True)\n"
        "loss1 = (w * 2).sum()\n"
        "loss2 = (w * 3).sum()\n"
    ))

GRAD_INPUT_UNUSED = _code(
    "AD305",
    "an input of torch.autograd.grad() was not used to compute the output",
    """\
**What it means.** An input given to `torch.autograd.grad` does not influence the output through recorded
operations: "The differentiated Tensor at index 1 appears to not have been used in the
graph". The doctor names that input and where it was made.

**Minimal example.**

    y = (x * 2).sum()
    gx, gz = torch.autograd.grad(y, [x, z])   # AD305: y does not use z

**The fix.** If the input truly does not matter, ask for a zero gradient (`materialize_grads=True`) or
None (`allow_unused=True`); if it should matter, find the cut (a `detach()`, `.item()`,
integer op or `torch.no_grad()` between them).
""",
    example_setup=(
        "x = torch.randn(3, requires_grad=True)\n"
        "z = torch.randn(3, requires_grad=True)\n"
    ))

GRAD_INPUT_NO_GRAD = _code(
    "AD306",
    "an input of torch.autograd.grad() does not require grad",
    """\
**What it means.** An input given to `torch.autograd.grad` does not require grad, so it has no gradient:
"One of the differentiated Tensors does not require grad".

**Minimal example.**

    scale = torch.randn(3)                            # no requires_grad
    torch.autograd.grad(y, [x, scale])                # AD306

**The fix.** Create it with `requires_grad=True` if you want its gradient, or remove it from the
inputs.
""",
    example_setup=(
        "x = torch.randn(3, requires_grad=True)\n"
        "y = (x * 2).sum()\n"
    ))

DECORATOR_CUT = _code(
    "AD307",
    "a @torch.no_grad() or @torch.inference_mode() decorator cut the gradient path",
    """\
**What it means.** The loss was computed through a function decorated with `@torch.no_grad()` or
`@torch.inference_mode()`: nothing inside it is recorded, and backward fails with "element 0
of tensors does not require grad and does not have a grad_fn" (explained by AD301). AD307
names the decorator.

**Minimal example.**

    @torch.no_grad()              # AD307 points here
    def predict(batch):
        return model(batch)
    loss = predict(x).pow(2).mean()
    loss.backward()

**The fix.** Remove the decorator from functions used in training (keep it on evaluation-only helpers),
or call the undecorated function when training.
""",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "x = torch.randn(2, 3)\n"
    ))

NON_LEAF_GRAD_READ = _code(
    "AD308",
    "the .grad of a tensor that is not a leaf was read: it is None",
    """\
**What it means.** backward() fills `.grad` only for leaves: tensors you created with `requires_grad=True`,
and parameters. A conversion or an operation applied after `requires_grad=True` (`.type(...)`,
`.to(...)`, `.double()`, `.cuda()`, `* 0.01`) returns a new tensor computed from the leaf; it
requires grad but is not a leaf, and its `.grad` stays None (PyTorch only warns). The error comes
later, from Python, where the gradient is used: "unsupported operand type(s) for *: 'float' and
'NoneType'" or "'NoneType' object has no attribute 'zero_'". The line to change is the one that
made the tensor a non-leaf.

**Minimal example.**

    w = torch.zeros(3, requires_grad=True).type(torch.float64)   # AD308: w is not a leaf
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad      # TypeError: w.grad is None

**The fix.** Ask for gradients on the final tensor: create it with the dtype and device it will have
(`torch.zeros(3, dtype=torch.float64, requires_grad=True)`), or convert first and call
`.requires_grad_()` last: `w = torch.zeros(3).type(torch.float64).requires_grad_()`.
For modules, move the module (`model.to(device)`), which keeps its parameters leaves.

Where the tensor is an intermediate result whose gradient you want (an activation, projected
points), keep it: `t.retain_grad()` right after it is made, before backward(); the help adds it there.
""",
    example_setup=(
        "x = torch.randn(4, 3, dtype=torch.float64)\n"
        "y = torch.randn(4, dtype=torch.float64)\n"
    ))


LEAF_GRAD_NONE_READ = _code(
    "AD309",
    "the .grad of a parameter that got no gradient was read: it is None",
    """\
**What it means.** backward() fills `.grad` only for leaves that require grad and that the loss
depends on. A frozen parameter (`requires_grad = False`, a pretrained embedding) or one the loss
did not use keeps `.grad = None`. Code that reads `p.grad` for every parameter (a hand-written
optimizer step, gradient clipping or logging) then fails in Python: "'NoneType' object has no
attribute 'data'", or "unsupported operand type(s) for *: 'float' and 'NoneType'".

**Minimal example.**

    model[0].weight.requires_grad = False            # frozen
    loss.backward()
    for p in model.parameters():
        p.data -= 0.1 * p.grad.data                   # AD309: p.grad is None for the frozen weight

**The fix.** Skip the parameters that have no gradient, as PyTorch's own optimizers do:
`if p.grad is None: continue` at the top of the loop. If the parameter should train, set
`requires_grad = True` on it (and give it to the optimizer), or use it in the loss. Where the
tensor is an input whose gradient you want (a saliency map, an adversarial example), make it
require grad before the forward pass: `x.requires_grad_()` right after it is made (the help adds
it there when the forward pass reads it before the backward()).
""",
    example_setup=(
        "model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))\n"
        "loss = model(torch.randn(4, 3)).pow(2).mean()\n"
    ))


UNUSED_INPUT_GRAD_NONE = _code(
    "AD310",
    "a gradient torch.autograd.grad returned as None was used: the output does not use that input",
    """\
**What it means.** `torch.autograd.grad(output, inputs, allow_unused=True)` returns None, not a
tensor of zeros, for an input the output does not depend on: a parameter of a branch that this
forward pass did not take (stochastic control flow, a head not used for this batch). Code that
accumulates those gradients by hand (`p.grad = g if p.grad is None else p.grad + g`, a manual
SGD step) then fails in Python once an earlier pass has set `p.grad`: "unsupported operand
type(s) for +: 'Tensor' and 'NoneType'".

**Minimal example.**

    for x, use_head in [(torch.randn(2, 3), True), (torch.randn(2, 3), False)]:
        out = body(x) if not use_head else head(body(x))
        grads = torch.autograd.grad(out.sum(), params, allow_unused=True)
        for g, p in zip(grads, params):
            p.grad = g if p.grad is None else p.grad + g   # AD310: g is None for the head

**The fix.** Skip the inputs whose gradient is None, as PyTorch's optimizers skip parameters
without `.grad`: `if g is None: continue` at the top of the loop. Replacing None by zeros
(`materialize_grads=True`) is not the same program: an optimizer with momentum then moves the
unused parameters too.
""",
    example_setup=(
        "body, head = nn.Linear(3, 3), nn.Linear(3, 1)\n"
        "params = list(body.parameters()) + list(head.parameters())\n"
    ))


GRAPH_CARRYING_GRADIENT = _code(
    "AD311",
    "a gradient assigned to .grad by hand carries a graph: step() never uses it, and it stays alive",
    """\
**What it means.** backward() and autograd.grad() make gradients without a graph unless
`create_graph=True` asks for one. A gradient computed by hand from tensors that require grad (a
Langevin or proximal step's `(x - x0) / sigma**2`, a data-fit term written out) does carry one, and
`p.grad = g` keeps it. A built-in optimizer's step() runs under no_grad, so the values are right,
but `p.grad` holds the whole graph and every tensor it saved; when the graph reaches `p` itself,
`p`, its `.grad` and the graph form a cycle through autograd's nodes that Python's garbage
collector cannot free, and each call leaves its graph behind (memory grows, no error).
autograd-doctor looks at the first steps of each optimizer, when no backward() or autograd.grad()
with `create_graph=True` ran, and names the `.grad = ...` assignment.

**Minimal example.**

    x = x0.clone().requires_grad_(True)
    opt = torch.optim.SGD([x], lr=0.1)
    for _ in range(3):
        x.grad = (x - x0) / 0.5 ** 2 + noise     # AD311: the gradient carries x's graph
        opt.step()

**The fix.** Assign the gradient without its graph, `x.grad = g.detach()` (or compute it under
`torch.no_grad()`, or from `x.detach()`), and set `x.grad = None` when the sampler returns.
""",
    example_setup=(
        "x0 = torch.randn(4)\n"
        "noise = torch.randn(4)\n"
    ))


CLEARED_BEFORE_ANY_STEP = _code(
    "AD312",
    "zero_grad() clears gradients no step() applies, and their parameters get none again: they never train",
    """\
**What it means.** A `zero_grad()` between some backward() calls and the `step()` that should
apply them throws their gradients away. When no other backward() reaches the same parameters
before the step (local losses backpropagated inside `forward()`, each module's input detached, and
a training loop or a framework's optimizer hook that clears right before the final
`loss.backward()` and `step()`), the step finds those parameters without a gradient and skips
them: they never train, and nothing fails. autograd-doctor reports, when it stops, a
`zero_grad()` that cleared one backward() statement's gradients before a step at least twice,
while no step of any optimizer ever applied them and each following step found every parameter
they reached still without a gradient. A backward() whose gradients are read and then cleared
(input gradients, Fisher information) is followed by another that reaches the same parameters,
and is not reported.

**Minimal example.**

    for x, y in batches:
        h = block(x)
        F.mse_loss(aux(h), y).backward()           # local loss: trains block and aux
        out = head(h.detach())
        optimizer.zero_grad()                      # AD312: clears block's and aux's gradients
        F.mse_loss(out, y).backward()
        optimizer.step()

**The fix.** Clear the gradients at the start of the iteration, before the forward pass whose
backward() calls compute them (mmcv's hook: clear in `before_train_iter`).
""",
    example_setup=(
        "block, aux, head = nn.Linear(3, 4), nn.Linear(4, 1), nn.Linear(4, 1)\n"
        "optimizer = torch.optim.SGD([*block.parameters(), *aux.parameters(), *head.parameters()], lr=0.1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(4)]\n"
    ))



AUTOCAST_FUNCTION_MIXED_DTYPES = _code(
    "AD313",
    "a custom autograd.Function run under autocast without custom_fwd: its backward gets two dtypes",
    """\
**What it means.** Autocast casts the ops *inside* a custom `torch.autograd.Function`'s forward
(a matrix product runs in float16/bfloat16), not the Function's inputs or what it saves: the
weights stay float32 while the activations and results are low precision. backward() runs
outside the autocast region, so a hand-written backward that multiplies the low-precision
gradient by the float32 weight fails ("expected m1 and m2 to have the same dtype", "expected
scalar type Half but found Float"), far from the `with torch.autocast(...)` that caused it.
autograd-doctor names the Function's forward when the error is raised in its own backward, its
saved tensors mix a low-precision and a float32 floating dtype, its forward has no
`custom_fwd`, and the program uses autocast.

**Minimal example.**

    class Project(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w
        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.t(), x.t() @ g        # AD313: bfloat16 and float32 operands

    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = Project.apply(torch.mm(x, x), w)
    y.float().sum().backward()

**The fix.** The documented one: `@torch.amp.custom_fwd(device_type=..., cast_inputs=torch.float32)`
on forward (it runs in float32 with autocast off, on inputs cast to float32) and
`@torch.amp.custom_bwd(device_type=...)` on backward (it runs in the same autocast state as
forward). Without `cast_inputs`, cast what forward saves to one dtype yourself.
""",
    example_setup=(
        "x = torch.randn(4, 4)\n"
        "w = torch.randn(4, 2, requires_grad=True)\n"
    ))

DETACHED_MODULE_OUTPUT = _code(
    "AD316",
    "an optimizer steps parameters that never get a gradient: detach_() cuts the only result they take part in",
    """\
**What it means.** `t.detach_()` turns `t` itself into a tensor without history. When `t` is the
result of a module (an embedding of the goal, a feature head) and that result is the only way the
module reaches the loss, its parameters never receive a gradient: the optimizer holds them, step()
skips them, and they keep their initial values while the rest of the model trains. Nothing fails.
autograd-doctor notes, at the first calls of each of your `detach_()` lines, which parameters the
graph it cuts reaches, and reports when the program ends without an exception: a line that cut a graph on at least two calls,
whose parameters an optimizer that stepped holds, with no gradient at the end of the run while
another parameter of that optimizer has one. A module frozen on purpose (its parameters in no
optimizer, or not requiring grad) and a module trained through another path stay silent.

**Minimal example.**

    for x, goal, y in batches:
        goal_feature = goal_mlp(goal)
        goal_feature.detach_()                    # AD316: goal_mlp never gets a gradient
        loss = F.mse_loss(head(torch.cat([x, goal_feature], -1)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Remove the `detach_()` when the module is meant to train; detach a copy
(`x.detach()`) only where a value must not carry gradients, or leave the module out of the
optimizer when it is meant to stay frozen.
""",
    example_setup=(
        "goal_mlp, head = nn.Linear(2, 4), nn.Linear(7, 1)\n"
        "optimizer = torch.optim.SGD([*goal_mlp.parameters(), *head.parameters()], lr=0.1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 2), torch.randn(5, 1)) for _ in range(4)]\n"
    ))


OPTIMIZER_NEVER_STEPS_NOR_CLEARS = _code(
    "AD317",
    "an optimizer never steps and never clears, while backward() keeps adding into its gradients",
    """\
**What it means.** backward() adds into `.grad`; `step()` applies it and `zero_grad()` clears it.
When an optimizer's `step()` and `zero_grad()` never run (a wrapper that calls them only under a
condition that is never true, such as `accumulation_steps > 1 and step % accumulation_steps == 0`
with the default of 1), the parameters never change and their gradients only grow. Nothing fails.
autograd-doctor follows the optimizers built while it runs and reports, when the program ends
without an exception (a run cut short shows no whole course), one that
never stepped and never cleared while at least two backward() calls added into the same `.grad` of
one of its parameters, not replaced since, and that parameter was not updated by hand. Where a
wrapper holds the optimizer and calls its `step()` under an `if`, that call is named.

**Minimal example.**

    class Every:
        def __init__(self, optimizer, n=1):
            self.optimizer, self.n, self.calls = optimizer, n, 0
        def step(self):
            self.calls += 1
            if self.n > 1 and self.calls % self.n == 0:
                self.optimizer.step()             # AD317: never runs with n=1
                self.optimizer.zero_grad()

    wrapped = Every(torch.optim.SGD(model.parameters(), lr=0.1))
    for x, y in batches:
        F.mse_loss(model(x), y).backward()
        wrapped.step()

**The fix.** Make the condition true on the calls meant to apply the gradients
(`n <= 1 or calls % n == 0`), so that `step()` and then `zero_grad()` run.
""",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(4)]\n"
    ))

IGNORED_INCOMING_GRADIENT = _code(
    "AD315",
    "a custom autograd.Function's backward never reads the gradient it is given: the chain rule is dropped",
    """\
**What it means.** A custom `torch.autograd.Function`'s backward receives, after `ctx`, the
gradient of the loss with respect to each output of forward, and must return, for each input,
that gradient multiplied by the output's derivative (the chain rule). A backward that returns the
derivative alone (the arc posteriors of a total score, `y * (1 - y)` of a sigmoid) is right only
where the loss is that output's plain sum; anywhere else (a weight, a minus sign, a later layer)
every input gets a wrongly scaled gradient, of the wrong sign where the loss subtracts the output,
and training goes the wrong way without an error. autograd-doctor remembers, while a doctor runs,
a custom backward whose incoming-gradient parameters appear nowhere in its body, and warns after
the backward() call in which it ran with a gradient that is not all ones and returned a nonzero
gradient (a Function that blocks gradients on purpose returns zeros or None).

**Minimal example.**

    class TotalScore(torch.autograd.Function):
        @staticmethod
        def forward(ctx, scores):
            total = scores.logsumexp(0)
            ctx.save_for_backward(scores, total)
            return total

        @staticmethod
        def backward(ctx, grad_total):
            scores, total = ctx.saved_tensors
            return (scores - total).exp()           # AD315: grad_total is never used

    loss = -TotalScore.apply(scores)                # the gradient given is -1
    loss.backward()

**The fix.** Multiply each returned gradient by the incoming one, mapped onto the input's
elements the way forward combined them (`(scores - total).exp() * grad_total` here; an indexed
`grad[index]` where forward reduced groups of elements); check with `torch.autograd.gradcheck`.
""",
    heading="a custom backward ignores the gradient it is given",
    example_setup="scores = torch.randn(5, requires_grad=True)\n",
)

GRADIENTLESS_OPTIMIZER_STEPS = _code(
    "AD214",
    "an optimizer keeps stepping, but none of its parameters has ever had a gradient",
    """\
**What it means.** backward() puts gradients on the leaves the loss was computed from. When every
loss is computed from other tensors than the ones an optimizer holds, its step() finds no gradient
and skips every parameter: nothing trains and nothing is raised. The usual cause is a copy: an
inner loop (MAML, hyper-parameter learning) that starts from `p.detach().clone().requires_grad_()`
copies of the model's weights (what `higher.innerloop_ctx` does by default,
`copy_initial_weights=True`), so the meta-gradient lands on the copies; or an optimizer built for
one model while the loss uses another. autograd-doctor notes the second step() that follows a
backward() while none of the optimizer's parameters, all of which require grad, has ever had a
gradient, and warns when the run ends if none of them got a gradient at any later step (a
warm-up that trains the head alone for the first epochs is not reported).

**Minimal example.**

    for epoch in range(2):
        fast = [p.detach().clone().requires_grad_() for p in model.parameters()]
        loss = ((torch.nn.functional.linear(x, *fast) - y) ** 2).mean()
        loss.backward()                 # fills the copies' .grad, not the model's
        opt.step()                      # AD214: model's parameters never get a gradient

**The fix.** Compute the loss from the optimizer's own parameters: start the inner loop from them
(`fast = list(model.parameters())`, `copy_initial_weights=False` in higher), or give the optimizer
the tensors the loss is computed from.
""",
    heading="an optimizer keeps stepping, but none of its parameters has ever had a gradient",
    example_setup=(
        "model = nn.Linear(3, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
    ))


TRAINED_IN_EVAL_MODE = _code(
    "AD244",
    "a module put in eval mode between two optimizer steps is trained in eval mode: nothing called train() again",
    """\
**What it means.** `model.eval()` switches dropout off and makes batch norm use (and stop
updating) its running statistics; `model.train()` switches them back. A sampling, logging or
validation helper that calls `self.eval()` inside the training loop and never `train()` leaves the
model in eval mode for every step after it: the loss is computed without dropout, batch norm's
statistics stay frozen, and the model trains on something else than intended. No error, and the
loss looks fine. autograd-doctor remembers the outermost `train()` / `eval()` calls; before an
optimizer step, when an `eval()` call was made since that optimizer's previous step and no
`train()` call at all, the module is still in eval mode, holds a dropout or batch-norm layer (in
eval mode), and the optimizer updates parameters of that module that have a gradient, it names
the call in the training loop that ran the `eval()`.

**Minimal example.**

    def sample(model, x):
        model.eval()                          # for deterministic sampling
        with torch.no_grad():
            return model(x)

    for step in range(3):
        preview = sample(model, x)            # AD244: model stays in eval mode
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Call `model.train()` after the call that put it in eval mode (or inside the helper,
before it returns), so that the training forward runs in train mode again.
""",
    heading="a module trained in eval mode after a helper called eval()",
    example_setup=(
        "model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 1))\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(4, 3)\n"
    ))


DECORATED_FORWARD_NOT_TRAINED = _code(
    "AD240",
    "an optimizer holds parameters of a module that runs with gradients off (a @torch.no_grad() forward, or a call inside a no_grad block): they never train",
    """\
**What it means.** A module written to be used frozen (a vision tower, a text encoder, a feature
extractor) often carries `@torch.no_grad()` or `@torch.inference_mode()` on its `forward`. When it
is later unfrozen (`requires_grad = True`) and its parameters are given to the optimizer, nothing
fails: its outputs carry no graph, the rest of the model trains and the loss goes down, but the
module's `.grad` stays None and step() skips its parameters. autograd-doctor remembers the
grad-off decorators the program ran; at an optimizer's first two steps, a module bound around
step() (or inside one) whose class's `forward` is such a decorated function, whose parameters that
require grad are all in the optimizer and got no gradient at either step while other parameters
did, is reported at the decorator line. A module whose parameters changed between those two
steps without a gradient (a MoCo or BYOL momentum encoder written through `.data`, an EMA copy)
is updated by the program on purpose, and is not reported.

**Minimal example.**

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 4)

        @torch.no_grad()                      # AD240: proj requires grad and is in the optimizer
        def forward(self, x):
            return self.proj(x)

    encoder, head = Encoder(), nn.Linear(4, 1)
    optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    x = torch.randn(8, 3)
    for step in range(3):
        loss = head(encoder(x)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Delete the decorator when the module is meant to train (keep it, or a `with
torch.no_grad():` at the call, only where the module is used frozen). A module frozen on purpose
(`requires_grad = False`, or left out of the optimizer) is not reported.

The same holds for a submodule called as `self.<name>(...)` inside a `with torch.no_grad():` block
of its parent's method (a projector applied in the block that runs a frozen vision tower, Valley#13):
its parameters, trainable and in the optimizer, get no gradient at the first two steps while others
do. The statement that calls it is named; the help computes that statement under
`with torch.enable_grad():` (the same as moving it after the block); the frozen modules' work stays
in the block.
""",
    heading="a trained module whose forward is decorated with @torch.no_grad()",
)


DEFAULT_FROZEN_LAYER = _code(
    "AD241",
    "an embedding rebuilt from a tensor that requires grad was frozen by from_pretrained()'s default freeze=True",
    """\
**What it means.** `nn.Embedding.from_pretrained(weight)` (and `nn.EmbeddingBag`'s) makes the new
layer's weight not require grad unless `freeze=False` is passed. Code that rebuilds a layer that
trains (embedding shards stacked back into one layer, a layer copied from a trained model) gets a
frozen layer: an optimizer built from the parameters that require grad leaves it out, backward()
gives it no gradient, and nothing fails. autograd-doctor notes `from_pretrained` calls that do not
pass `freeze` and are given a tensor that requires grad; at an optimizer's first two steps, when
the layer's weight still does not require grad and a module bound around step() holds it while
the optimizer trains that module's other parameters, the call is named.

**Minimal example.**

    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 1))
    model[0] = nn.Embedding.from_pretrained(model[0].weight * 1.0)   # AD241: frozen by default
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    ids = torch.randint(0, 10, (6,))
    for step in range(3):
        loss = model(ids).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Pass `freeze=False` when the layer is meant to train. Fixed vectors loaded on
purpose (a tensor that does not require grad) and an explicit `freeze=True` are not reported.
""",
    heading="an embedding frozen by from_pretrained()'s default",
)


GRAD_READ_AFTER_TWO_BACKWARDS = _code(
    "AD245",
    ".grad read after a second backward() added into it: the value is the sum of both losses' gradients",
    """\
**What it means.** backward() adds into `.grad`; it does not replace it. A script that calls
backward() on one quantity, reads `x.grad` (a virial, a saliency map, a first gradient), then
calls backward() on a second quantity and reads `x.grad` again, gets the sum of both gradients
the second time. No error. autograd-doctor remembers, over the first few backward() calls, the
leaves each one reached and their `.grad`; at the next backward(), a leaf that no optimizer holds,
whose values did not change, whose `.grad` is still the same uncleared tensor, that this
backward() reaches again, and whose `.grad` the function reads both between the two calls and
after the second, is reported at the second backward().

**Minimal example.**

    first = (x ** 2).sum()
    first.backward()
    slope = x.grad.clone()            # the gradient of `first`
    second = (3 * x).sum()
    second.backward()                 # AD245: adds into x.grad
    g = x.grad                        # 2x + 3, not 3

**The fix.** Clear `.grad` before the second backward() (`x.grad = None`), or take the gradient
with `torch.autograd.grad(second, x)`, which leaves `.grad` alone. Accumulating on purpose (two
losses' gradients summed, `.grad` read after the last backward() only) is not reported.
""",
    heading="a .grad read after a second backward() accumulated into it",
    example_setup="x = torch.randn(4, requires_grad=True)\n",
)


GRAD_OFF_LOSS_TERM = _code(
    "AD246",
    "a loss term computed from a trained module under no_grad: it changes the loss but trains nothing",
    """\
**What it means.** Values computed inside `with torch.no_grad():` (or `inference_mode`,
`set_grad_enabled(False)`) carry no graph. A loss term made from them (a contrastive term on
features, a perceptual or CLIP term on decoded outputs) is added to the loss, changes its value,
and sends no gradient anywhere: the parameters that only this term reached are never trained.
No error. autograd-doctor reads the loss's added terms at the first backward() of each line: a
term whose tensor carries no graph, whose names lead back to a grad-off block in the same function
that calls a module whose parameters an optimizer steps, while some of those parameters have no
gradient after this backward(), is reported at the block.

**Minimal example.**

    for step in range(2):
        with torch.no_grad():
            features = projector(x)           # AD246: the block cuts the term below
        aux = features.pow(2).mean()
        loss = classifier(x).pow(2).mean() + aux
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Compute what the term is made from with gradients on (remove the block, or move
the term's computation out of it). Keep under `no_grad` only what is meant as a target
(pseudo-labels, a teacher's output), used with a term that carries a graph.
""",
    heading="a loss term computed under no_grad from a trained module",
    example_setup=(
        "projector = nn.Linear(3, 4)\n"
        "classifier = nn.Linear(3, 1)\n"
        "optimizer = torch.optim.SGD([*projector.parameters(), *classifier.parameters()], lr=0.1)\n"
        "x = torch.randn(8, 3)\n"
    ))



UNBACKPROPAGATED_GRADIENT_PENALTY = _code(
    "AD247",
    "a gradient taken with create_graph=True is never backpropagated: the penalty built from it is left out of the loss",
    """\
**What it means.** `torch.autograd.grad(..., create_graph=True)` builds the graph of the
gradient's own backward so that a penalty made from the gradient (WGAN-GP's gradient penalty,
R1, an input-gradient or Jacobian regularizer) can be backpropagated with the loss. When the
penalty is computed and then left out of the loss that backward() runs, that graph is built and
never used: the parameters are trained by the other terms alone. No error, no `.grad` is None.
autograd-doctor notes the nodes each such call returns; when the next backward() does not run
them while a tensor in that backward()'s frame is built from them and reaches parameters the loss
reaches, it reports the loss's assignment, the second time the same lines do it.

**Minimal example.**

    for step in range(2):
        x = data.clone().requires_grad_()
        (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = (grad.norm(dim=1) - 1).pow(2).mean()
        loss = critic(x).mean()                 # AD247: penalty is not in the loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

**The fix.** Add the penalty to the loss that is backpropagated (`loss = critic(x).mean() +
10 * penalty`). If the gradient is only looked at (logged, plotted), take it without
`create_graph=True`.
""",
    heading="a gradient penalty computed and left out of the loss",
    example_setup=(
        "critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))\n"
        "optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)\n"
        "data = torch.randn(8, 3)\n"
    ))

PROBED_MODEL_STEPPED = _code(
    "AD249",
    "an optimizer built from a wrapper's parameters() also trains the evaluated model the wrapper holds",
    """\
**What it means.** An explainer, an adversarial patch or a learned prompt is often a module that
holds the trained model as a submodule next to its own few parameters (masks, a patch). An
optimizer built from `wrapper.parameters()` gets the model's weights too, so each step of the
wrapper also changes the model it is meant to explain or attack. No error; the result describes a
drifting model. autograd-doctor looks at each optimizer's first step with gradients: when its
construction reads `NAME.parameters()`, a submodule of that module is in eval mode, its parameters
got gradients, and another optimizer trained them before, the construction is reported.

**Minimal example.**

    explainer = Explainer(model)                       # the trained model, in eval mode, and a mask
    optim = torch.optim.Adam(explainer.parameters())   # AD249: also the model's weights
    explainer(x).pow(2).mean().backward()
    optim.step()

**The fix.** Give the optimizer what the wrapper learns only
(`torch.optim.Adam([explainer.mask])`), or freeze the model
(`model.requires_grad_(False)`).
""",
    heading="an explainer's optimizer that also trains the explained model",
    example_setup=(
        "class Explainer(nn.Module):\n"
        "    def __init__(self, model):\n"
        "        super().__init__()\n"
        "        self.model = model\n"
        "        self.mask = nn.Parameter(torch.zeros(3))\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.model(x * torch.sigmoid(self.mask))\n"
        "\n"
        "\n"
        "model = nn.Linear(3, 1)\n"
        "model_optim = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.randn(8, 3)\n"
        "model(x).pow(2).mean().backward()\n"
        "model_optim.step()\n"
        "model.eval()\n"
    ))


NO_GRAD_UNDER_FORWARD_TRANSFORM = _code(
    "AD318",
    "torch.func.jvp/jacfwd differentiates through a `with torch.no_grad():` block",
    """\
**What it means.** `torch.no_grad()` turns off reverse-mode autograd only. Forward-mode AD, which
`torch.func.jvp` and `torch.func.jacfwd` use, does not honour it: a value computed inside a
`no_grad` block still carries a tangent, so the Jacobian or directional derivative counts its
derivative, while `jacrev`, `vjp` or `backward()` of the same function treat it as a constant. A
penalty or update built from `jacfwd` is then computed on a different Jacobian than the one the
code describes, and nothing fails. autograd-doctor notes each `with torch.no_grad():` block of
yours entered while a forward-mode transform runs, and reports, when the program ends, the names
the block bound that carry a tangent. That includes a block inside a reverse-mode transform that a
forward-mode one encloses (`torch.func.hessian`, which is `jacfwd(jacrev(f))`, or `jvp(grad(f))`):
the inner reverse mode treats the value as a constant, the outer forward mode does not.

**Minimal example.**

    def f(x):
        with torch.no_grad():
            offset = torch.sin(x)                 # AD318: jacfwd still differentiates sin(x)
        return x * 2 + offset

    jac = torch.func.jacfwd(f)(torch.randn(3))

**The fix.** Detach the value inside the block (`offset = torch.sin(x).detach()`): `detach()`
drops the tangent as well as the graph, so both modes treat it as the constant the block meant.
""")


HOOK_RETURNED_WRONG_GRADIENTS = _code(
    "AD319",
    "a backward hook returned gradients that do not match the ones it replaces",
    """\
**What it means.** A backward hook may return new gradients in place of the ones it is given;
PyTorch then checks each returned gradient against the one it replaces and raises "hook 'NAME'
has changed the size of value", "has returned an incorrect number of values" or "Backward hook
returned an invalid number of grad_input". Which gradients a module hook gets depends on how it
was registered. `register_backward_hook` (deprecated) hands the hook the gradients of the inputs of
the module's *last operation*, not of forward's arguments: an `nn.Linear` with a bias ends in
`addmm`, whose `grad_input` is (bias, input, weight.T); without a bias it ends in a matrix
product, whose `grad_input` is (input, weight.T), so a hook that indexes `grad_input` for one
layout puts a gradient in the wrong slot for the other. `register_full_backward_hook` hands the
gradients of forward's tensor arguments and must return None or a *tuple* with one gradient per
argument: a bare tensor is unpacked along its first dimension. autograd-doctor finds the hook on
the user's modules and names its `return`.

**Minimal example.**

    layer = nn.Linear(3, 2, bias=False)

    def scale_hook(module, grad_input, grad_output):
        return (grad_input[0], grad_input[0] * 0.5)   # AD319: slot 1 is weight.T's, (3, 2)

    layer.register_backward_hook(scale_hook)
    x = torch.randn(4, 3, requires_grad=True)
    layer(x).sum().backward()                         # RuntimeError

**The fix.** Return, slot for slot, gradients of the shapes the hook was given: index
`grad_input` by the last operation's layout, or register the hook with
`register_full_backward_hook` and return a tuple with one gradient per forward argument
(`return (grad,)` for a module that takes one tensor).
""")


SELF_SEEDED_BACKWARD = _code(
    "AD320",
    "a one-element loss is backpropagated with itself as the gradient seed",
    """\
**What it means.** `backward(gradient)` multiplies every gradient by the seed it is given.
`loss.backward(loss)` (or `loss.backward(loss.detach())`) therefore computes the gradients of
`loss ** 2 / 2`, not of `loss`: each step is scaled by the current loss value, large while the loss
is large and vanishing near zero, and the training follows another objective. A seed of the loss's
own shape is legal, so nothing fails. PyTorch raises nothing for it (it is numbered with the errors
only because the warning numbers were taken). autograd-doctor looks at each backward() given a seed:
a root of one element that requires grad, seeded with a tensor of its own memory whose value is not
1. A seed of several elements (`y.backward(y)`, the gradient of `(y ** 2).sum() / 2`) is a known
idiom and is not reported.

**Minimal example.**

    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = ((w - 3) ** 2).sum()
    loss.backward(loss)          # AD320: every gradient is multiplied by the loss (5.0)

**The fix.** Call `loss.backward()`: a one-element loss is seeded with 1. To weight the elements of
a loss of several values, pass the weights as the seed, not the loss.
""",
    heading="a loss backpropagated with itself as the gradient seed",
)

FUNCTION_WITHOUT_BACKWARD = _code(
    "AD321",
    "a custom autograd.Function without a backward staticmethod is differentiated",
    """\
**What it means.** A `torch.autograd.Function` subclass that defines only `forward` can be applied,
but when backward() (or `torch.autograd.grad`) reaches one of its outputs, PyTorch raises
"NotImplementedError: You must implement either the backward or vjp method for your custom
autograd.Function to use it with backward mode AD". The traceback shows only torch's frames.
Functions written for a step that has no gradient (a neighbour search, sampling, rounding to
indices) are often left without a backward; the error appears once an input of theirs requires
grad (learned point positions, a feature from a trained layer).

**Minimal example.**

    class NearestDistance(torch.autograd.Function):    # AD321: no backward staticmethod
        @staticmethod
        def forward(ctx, query, points):
            return torch.cdist(query, points).min(dim=1).values

    points = torch.randn(8, 3, requires_grad=True)
    NearestDistance.apply(torch.randn(4, 3), points).sum().backward()

**The fix.** When the Function's outputs are meant as constants, give it
`@staticmethod def backward(ctx, *grad_outputs)` returning `None` once per input of forward:
autograd then sends no gradient through it (as the maintainers of the point-cloud libraries that
ship such Functions advise). When a gradient through it is meant, write the backward that computes
it. autograd-doctor writes the first (unverified: it cannot know which was meant) and names the
inputs that required grad; a method of the class whose name is a misspelling of `backward`
(`backwards`) is renamed instead.
""",
    heading="a custom Function without backward, differentiated",
)

UNGRADED_STEP_WRITES = _code(
    "AD322",
    "an optimizer's step() changed parameters that backward() gave no gradient",
    """\
**What it means.** torch.optim's optimizers skip a parameter whose `.grad` is None: a head the loss
did not use, an expert no token was routed to, keep their values. A hand-written optimizer that gives
such a parameter a zero gradient (`p.grad = torch.zeros_like(p)`) and then applies its weight decay
or its momentum to every parameter changes them anyway: the unused part shrinks or drifts step after
step, with no gradient behind the change, and nothing fails (KellerJordan/Muon#54). PyTorch raises
nothing for it (it is numbered with the errors only because the warning numbers were taken).
autograd-doctor copies, before each of an optimizer's first three steps, the parameters that require
grad and have no gradient while others have one, and compares them after the step.

**Minimal example.**

    class DecayAll(torch.optim.Optimizer):
        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        p.grad = torch.zeros_like(p)     # AD322: and the decay below still applies
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(p.grad, alpha=-group["lr"])

    used, unused = nn.Linear(4, 2), nn.Linear(4, 2)
    optimizer = DecayAll([*used.parameters(), *unused.parameters()], dict(lr=0.1, weight_decay=0.5))
    used(torch.randn(8, 4)).pow(2).mean().backward()
    optimizer.step()                              # unused's weights shrink with no gradient

**The fix.** Skip the parameter, `if p.grad is None: continue`, before its weight decay and update,
as torch.optim does. autograd-doctor writes that change where step() gives the parameter a gradient
in an `if p.grad is None:` of the user's file; otherwise it names the step() call.
""",
    heading="an optimizer step changed parameters that got no gradient",
    example_setup="from torch import nn\n",
)

COMPARED_ONLY_PARAMETER = _code(
    "AD325",
    "a parameter read only in comparisons gets no gradient: it never trains",
    """\
**What it means.** A learnable threshold written as a mask, `mask = (x > self.thres).float()`, or
`x.ge(self.cutoff)`: a comparison gives a boolean tensor with no graph, so backward() never reaches
the parameter compared. Its `.grad` stays None, torch.optim skips it, and it keeps its initial value
while the rest of the model trains; nothing fails. PyTorch raises nothing for it (it is numbered
with the errors only because the warning numbers were taken). autograd-doctor looks at the first two
`step()` calls of each optimizer for a parameter it holds that requires grad and has no gradient
while others have one, declared by a module of the user's class whose code reads it only as an
operand of comparisons.

**Minimal example.**

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.encode = nn.Linear(4, 4)
            self.thres = nn.Parameter(torch.tensor(0.5))

        def forward(self, x):
            features = self.encode(x)
            return features * (features > self.thres).float()     # AD325

    gate = Gate()
    optimizer = torch.optim.SGD(gate.parameters(), lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        gate(torch.randn(8, 4)).pow(2).mean().backward()
        optimizer.step()

**The fix.** Make the step differentiable if the threshold is meant to learn: a soft step,
`torch.sigmoid(alpha * (features - self.thres))`, with a sharpness `alpha` of your choosing, or a
straight-through estimator; if it is a fixed setting, keep it out of the optimizer (a buffer, or
`requires_grad=False`). autograd-doctor names the comparison and leaves the choice to you.
""",
    heading="a parameter read only in comparisons",
    example_setup="from torch import nn\n",
)

STALE_GRADIENT_ACCUMULATOR = _code(
    "AD326",
    "a parameter's shape was changed through .data while a graph built before still held its gradient accumulator",
    """\
**What it means.** Pruning by hand, `layer.weight.data = layer.weight.data[:, :90]`, changes a
parameter's shape in place of the tensor. A leaf's gradient accumulator (the AccumulateGrad node
that adds into its `.grad`) is made once and kept as long as a graph holds it, and it records the
leaf's shape when it is made. If a graph built before the change is still alive (the loss of the
last step, still bound to a name), the next forward pass reuses that accumulator, and backward()
fails in the node before it: "Function TBackward0 returned an invalid gradient at index 0 - got
[10, 90] but expected shape compatible with [10, 100]". autograd-doctor checks that the node's
input is the accumulator of a leaf whose shape is now the gradient's, names the `.data` assignment
that changed it, and the name that held the old graph.

**Minimal example.**

    layer = nn.Linear(4, 2)
    loss = layer(torch.ones(4)).sum()
    loss.backward()
    layer.weight.data = layer.weight.data[:, :3]     # AD326: loss still holds the old graph
    loss = layer(torch.ones(3)).sum()
    loss.backward()

**The fix.** Release the old graph before changing the shape (`del loss` before the `.data`
assignment; the next forward pass then makes an accumulator of the new shape, and the gradient
already in `.grad` is kept), or give the module a new parameter of the new shape
(`layer.weight = nn.Parameter(...)`: a new leaf, whose `.grad` starts empty). When the tensor
backward() was called on is the name that held the old graph and nothing else took it,
autograd-doctor inserts the `del`.
""",
    heading="a parameter's shape changed under a stale gradient accumulator",
    example_setup="from torch import nn\n",
)

CUT_TERM_IN_CALLED_LOSS = _code(
    "AD327",
    "a term of the loss a loss function returned was computed from a copy cut from the graph: it trains nothing",
    """\
**What it means.** A loss module or loss function of your own returns a sum of terms, and one of
them is computed from `pred.detach()`, `pred.cpu().numpy()`, `pred.item()` or `pred.data`: a copy
of the prediction's values outside the graph (to run NumPy, OpenCV or a metric library on it), then
made a tensor again with `torch.tensor(...)`. That term is a constant: it changes the loss's value
but sends no gradient back, so it trains nothing. The other terms still reach the model, so
backward() runs, every parameter gets a gradient and nothing fails; `loss.requires_grad_(True)` on
the sum changes nothing (it already has a graph). autograd-doctor looks, after the first backward()
of each line, at the loss function that returned the loss: a term whose values come, through the
function's own lines, only from such a cut of an argument that carries a graph at run time, while
another term reads the graph, and the loss's graph has a sum with an input without a graph. A value
that is meant to be constant (a target computed from detached values and compared with the live
prediction, a fixed offset, a metric kept for logging and not added) is not reported.

**Minimal example.**

    class EdgeLoss(nn.Module):
        def forward(self, pred, target):
            values = pred.detach().numpy()      # AD327: the edge term is computed from this copy
            edges = torch.tensor(abs(values[:, 1:] - values[:, :-1]).mean())
            return F.mse_loss(pred, target) + edges

    model, criterion = nn.Linear(4, 4), EdgeLoss()
    loss = criterion(model(torch.randn(8, 4)), torch.randn(8, 4))
    loss.backward()

**The fix.** Compute the term with torch operations on the prediction itself (the same formula
written with torch instead of NumPy), so that its gradient reaches the model; keep the NumPy version
for logging only. If the term is meant as a logged value, do not add it to the loss.
autograd-doctor names the cut and leaves the rewrite to you.
""",
    heading="a loss function's term computed from a copy cut from the graph",
)

TITLES = {code: entry.title for code, entry in REGISTRY.items()}
EXPLANATIONS = {code: entry.explanation for code, entry in REGISTRY.items()}


def title(code: str) -> str:
    return TITLES.get(code, code)


def explanation(code: str) -> str | None:
    return EXPLANATIONS.get(code.upper())
