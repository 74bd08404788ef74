"""Diagnosis codes of the run-time doctor, their titles and long explanations.

`autograd-doctor explain CODE` prints `explanation(CODE)`; docs/codes.md carries the
same text (a test checks that every code is documented there).
"""

from __future__ import annotations

SAVED_TENSOR_MODIFIED = "AD101"
LEAF_INPLACE = "AD102"
OPTIMIZER_MODIFIED_SAVED = "AD103"
MULTI_OUTPUT_VIEW_INPLACE = "AD104"
SILENT_ALIAS_WRITE = "AD201"
SAVED_CONTENT_CHANGED = "AD202"
OVERLAPPING_INPLACE = "AD203"
STALE_VIEW = "AD204"
DETACH_ALIAS_WRITE = "AD205"
NUMBER_TERM_IN_LOSS = "AD206"
GRADIENT_PATH_CUT = "AD301"
BACKWARD_TWICE = "AD302"
DEEPCOPY_NON_LEAF = "AD303"
TENSOR_COPY_CUTS_GRAPH = "AD304"

# The error catalogue (analysis/errors, docs/errors.md): titles and explanations live in
# catalogue_codes.py, merged into TITLES and EXPLANATIONS below.
VIEW_MODE_INPLACE = "AD105"
VIEW_MODE_BASE_MODIFIED = "AD106"
CUSTOM_FUNCTION_VIEW_INPLACE = "AD107"
DETACH_VIEW_INPLACE = "AD108"
INFERENCE_TENSOR_SAVED = "AD109"
INFERENCE_TENSOR_INPLACE = "AD110"
INFERENCE_TENSOR_REQUIRES_GRAD = "AD111"
BACKWARD_NON_SCALAR = "AD112"
NUMPY_REQUIRES_GRAD = "AD113"
INTEGER_REQUIRES_GRAD = "AD114"
NON_LEAF_REQUIRES_GRAD_FLAG = "AD115"
HOOK_WITHOUT_GRAD = "AD116"
OUT_WITH_GRAD = "AD117"
NAN_IN_BACKWARD = "AD118"
NON_LEAF_OPTIMIZED = "AD119"
FUNCTION_GRADIENT_MISMATCH = "AD120"
MARK_DIRTY_NOT_RETURNED = "AD121"
SAVE_FOR_BACKWARD_NON_TENSOR = "AD122"
GRAD_OUTPUTS_SHAPE = "AD123"
EXPANDED_INPLACE = "AD124"
CHECKPOINT_RECOMPUTE_MISMATCH = "AD125"
CHECKPOINT_REENTRANT_GRAD = "AD126"
DDP_UNUSED_PARAMETERS = "AD127"
OPTIMIZER_PARAMS_NOT_ITERABLE = "AD128"
OPTIMIZER_EMPTY_PARAMETERS = "AD129"
NEGATIVE_SLOPE_INPLACE = "AD130"
GRAD_ASSIGNED_SHAPE = "AD131"
OPTIMIZER_OVERLAPPING_GROUPS = "AD132"
RESIZE_WITH_GRAD = "AD133"
APPLY_WITH_GRAD = "AD134"
GRAD_EMPTY_INPUTS = "AD135"
CHECKPOINT_SAVED_UNPACKED_TWICE = "AD136"
MARK_DIRTY_LEAF = "AD137"
MULTI_OUTPUT_BASE_MODIFIED = "AD138"
SAVED_DETACHED_INPLACE = "AD139"
NON_DIFFERENTIABLE_ARGUMENT = "AD140"
AUTOGRAD_INSIDE_TRANSFORM = "AD141"
GRAD_INPUT_UNUSED = "AD305"
GRAD_INPUT_NO_GRAD = "AD306"
DECORATOR_CUT = "AD307"
NON_LEAF_GRAD_READ = "AD308"

TITLES = {
    SAVED_TENSOR_MODIFIED: "a tensor that autograd saved was modified in place before backward()",
    LEAF_INPLACE: "a leaf tensor that requires grad was modified in place",
    OPTIMIZER_MODIFIED_SAVED: "optimizer.step() modified a parameter that a graph still needed for backward()",
    MULTI_OUTPUT_VIEW_INPLACE: "an output of chunk/split/unbind was modified in place",
    SILENT_ALIAS_WRITE: "a saved tensor was changed through an alias PyTorch does not track; the gradient is silently wrong",
    SAVED_CONTENT_CHANGED: "the contents of a saved tensor changed between the forward pass and backward()",
    OVERLAPPING_INPLACE: "an in-place op reads memory that it writes",
    STALE_VIEW: "a view kept from earlier was changed by a later write to its base",
    DETACH_ALIAS_WRITE: "a write through a detach() alias changed a tensor that is still in use",
    NUMBER_TERM_IN_LOSS: "a loss term was turned into a Python number before it was added: it trains nothing",
    GRADIENT_PATH_CUT: "the gradient path from the loss was cut",
    BACKWARD_TWICE: "backward() went through a graph that an earlier backward() already freed",
    DEEPCOPY_NON_LEAF: "copy.deepcopy of a tensor that is not a graph leaf",
    TENSOR_COPY_CUTS_GRAPH: "torch.tensor() copied values out of the graph",
}

EXPLANATIONS = {
    SAVED_TENSOR_MODIFIED: """\
## AD101: a tensor that autograd saved was modified in place before backward()

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
""",
    LEAF_INPLACE: """\
## AD102: a leaf tensor that requires grad was modified in place

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
(`w2 = w.index_fill(0, torch.tensor([0]), 1.0)`); it is then no longer a leaf.
""",
    OPTIMIZER_MODIFIED_SAVED: """\
## AD103: optimizer.step() modified a parameter that a graph still needed

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

**The fix.** Call `step()` after the last backward() that uses the graph (compute all
losses and call backward first), or run the forward pass again after `step()`
(`out = D(G(z))` before the generator loss), or `detach()` where the other network
should not receive gradients.
""",
    MULTI_OUTPUT_VIEW_INPLACE: """\
## AD104: an output of chunk/split/unbind was modified in place

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
    SILENT_ALIAS_WRITE: """\
## AD201: a saved tensor was changed through an alias PyTorch does not track

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
    SAVED_CONTENT_CHANGED: """\
## AD202: the contents of a saved tensor changed between forward and backward

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
    OVERLAPPING_INPLACE: """\
## AD203: an in-place op reads memory that it writes

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
""",
    STALE_VIEW: """\
## AD204: a view kept from earlier was changed by a later write to its base

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
    DETACH_ALIAS_WRITE: """\
## AD205: a write through a detach() alias changed a tensor still in use

**What it means.** `z = y.detach()` has no gradient history but shares storage (and
the version counter) with `y`. Writing into `z` changes `y` as well.

**Minimal example.**

    y = x * 2
    view = y.detach()
    view[0] = -1        # AD205: y[0] is now -1 too
    print(y)            # tensor([-1., 4.], grad_fn=<MulBackward0>)

**The fix.** For an independent copy use `y.detach().clone()`.
""",
    NUMBER_TERM_IN_LOSS: """\
## AD206: a loss term was turned into a Python number before it was added: it trains nothing

**What it means.** `.item()` and `float(t)` turn a tensor into a plain Python number, which has no
gradient. Added to the loss, such a number changes the printed loss value but not one
gradient, so the term trains nothing: whatever computed it (a regulariser, an auxiliary head,
a KL term) is never pushed by it. No `.grad` is None (the rest of the loss reaches the
parameters), no error is raised. autograd-doctor reads the loss backpropagated by each
backward() line once, follows its added terms to their assignments, and warns about a term
made only of numbers that converts a tensor that requires grad.

**Minimal example.**

    ce = F.cross_entropy(model(x), y)
    reg = 0.01 * model.weight.pow(2).sum().item()   # AD206: a number
    loss = ce + reg
    loss.backward()                                  # the penalty trains nothing

**The fix.** Add the tensor itself (`reg = 0.01 * model.weight.pow(2).sum()`); keep `.item()` for
logging (`print(reg.item())`).
""",
    GRADIENT_PATH_CUT: """\
## AD301: the gradient path from the loss was cut

**What it means.** A parameter ended backward with `.grad is None`, or backward failed
with "element 0 of tensors does not require grad and does not have a grad_fn": the
loss does not depend on the parameter through operations autograd recorded. Common
causes: `detach()`, `.data`, a `torch.no_grad()` block, `torch.tensor(...)` or a NumPy
round trip, `argmax` and other integer ops, `requires_grad_(False)`.

**Minimal example.**

    features = encoder(x).detach()     # AD301: the path to encoder is cut here
    loss = head(features).mean()
    loss.backward()                    # encoder's parameters end with .grad None

    total = torch.tensor([l1.item(), l2.item()]).sum()
    total.backward()   # RuntimeError: element 0 of tensors does not require grad ...

**The fix.** Keep the computation in torch ops under grad mode; use `torch.stack`
instead of `torch.tensor([...])`; remove the `detach()` on the path.
""",
    BACKWARD_TWICE: """\
## AD302: backward() went through a graph that an earlier backward() already freed

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
    DEEPCOPY_NON_LEAF: """\
## AD303: copy.deepcopy of a tensor that is not a graph leaf

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
    TENSOR_COPY_CUTS_GRAPH: """\
## AD304: torch.tensor() copied values out of the graph

**What it means.** `torch.tensor(t)` and `torch.tensor([loss1, loss2])` copy the values
into a new leaf tensor with no gradient history: gradients stop there.

**Minimal example.**

    total = torch.tensor([loss1, loss2]).sum()   # AD304: a new leaf, no history
    total.backward()                             # fails: no grad_fn

**The fix.** `torch.stack([loss1, loss2])` keeps the graph; `t.detach().clone()` is the
explicit copy when you want none.
""",
}


from autograd_doctor.catalogue_codes import CATALOGUE_EXPLANATIONS, CATALOGUE_TITLES  # noqa: E402

TITLES.update(CATALOGUE_TITLES)
EXPLANATIONS.update(CATALOGUE_EXPLANATIONS)

def title(code: str) -> str:
    return TITLES.get(code, code)


def explanation(code: str) -> str | None:
    return EXPLANATIONS.get(code.upper())
