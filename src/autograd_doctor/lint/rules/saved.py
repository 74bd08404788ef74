from autograd_doctor.lint.rules import Rule

RULES = [
    Rule(
        code="ADL001", name="write-to-saved-tensor",
        summary="A tensor is modified in place after an op saved it for backward.",
        what_it_does="""Finds an in-place write to a name (`y[i] = v`, `y[mask] = v`, `y += 1`,
`y.mul_(2)`, `F.relu(y, inplace=True)`, `torch.add(a, b, out=y)`) made after
an op in the same function saved that tensor for the backward pass, when the
name was not re-bound in between.  Which op saves what comes from
`lint/data/saves.json`, generated from the installed torch by
`scripts/gen_saves_table.py`: ops such as `exp`, `sigmoid`, `tanh`, `relu`,
`softmax`, `log_softmax`, `sqrt` keep their *output*; `mul`, `div`,
`matmul`, `F.linear`, `pow`, `sin`, `log` keep their *inputs*.  In an
`nn.Module` subclass, calling a module attribute built in `__init__` from
`nn.Linear`, `nn.Conv2d`, `nn.Sigmoid`, `nn.Tanh`, `nn.ReLU`, `nn.Softmax`,
`nn.LogSoftmax`, `nn.GELU`, `nn.SiLU`, `nn.LayerNorm`... counts as the
corresponding op (`self.fc(x)` keeps `x`).""",
        why_bad="""`backward()` needs the saved value.  PyTorch notices the version bump
and raises `RuntimeError: one of the variables needed for gradient computation
has been modified by an inplace operation`, without saying which line did
it.  If saved-tensor hooks are installed, or the write went through `.data`,
the gradient is silently wrong instead.""",
        example="""y = torch.sigmoid(x)
y[0] = 0.0          # SigmoidBackward0 needs the original y

z = x * w
x.mul_(2)           # MulBackward0 needs the original x for w's gradient""",
        use_instead="""y = torch.sigmoid(x)
y = y.clone()
y[0] = 0.0

z = x * w
x = x.mul(2)""",
        fix_safety="""Unsafe (only with `--unsafe-fixes`): `y += v` becomes `y = y + v`,
a statement `y.add_(v)` becomes `y = y.add(v)`, `inplace=True` becomes
`inplace=False`, and an indexed write gets `y = y.clone()` inserted before it.
Each keeps the saved value intact but changes what other aliases of `y` see.""",
        known_problems="""The analysis is per function and in source order: it ignores
branches (a save in the `if` and a write in the `else` are still matched) and
cannot always know whether the tensor requires grad.  A write after a
`backward()` call (without `retain_graph=True`) in the same function is not
reported: the graph and its saved tensors are gone by then.  `y = x * x; y[0] = 0` is correctly not reported: `mul`
saves its inputs, not its output.  Only names are tracked, not attributes
(`self.h`) or container elements.""",
    ),
    Rule(
        code="ADL002", name="inplace-activation-input-reused",
        summary="An in-place activation overwrites its input, and the input is used again afterwards.",
        what_it_does="""Finds `F.relu(x, inplace=True)` and the other functionals that take
`inplace=` (`relu6`, `elu`, `selu`, `celu`, `leaky_relu`, `hardtanh`, `silu`,
`mish`, `hardswish`, `hardsigmoid`, `threshold`, `dropout`...), `torch.relu_(x)`,
and calls of a module attribute built with `inplace=True` in `__init__`
(`self.act = nn.ReLU(inplace=True)` ... `y = self.act(x)`), but only when
`x` is read again later in the same function without being re-bound.""",
        why_bad="""After the call, `x` holds the activated values.  A later use of `x` (a
residual connection, a second branch, logging) silently sees them, or, if
an op saved `x` for backward, `backward()` fails.""",
        example="""h = F.relu(x, inplace=True)
return h + x        # x now holds relu(x), not the input

# the same with a module: self.act = nn.ReLU(inplace=True) in __init__,
# then h = self.act(x) in forward() followed by a use of x""",
        use_instead="""h = F.relu(x)
return h + x""",
        fix_safety="""Unsafe: `inplace=True` becomes `inplace=False`.  The later uses then see
the input's original values, which is what the code almost always means,
but it is a change of behaviour (and of memory use), so it needs
`--unsafe-fixes`.""",
        known_problems="""`x = F.relu(x, inplace=True)` (re-binding the name) is fine and not
reported.  Modules inside `nn.Sequential` and modules passed in from outside
are not tracked.""",
    ),
    Rule(
        code="ADL003", name="optimizer-step-between-backwards",
        summary="An optimizer step runs between `backward(retain_graph=True)` and a later `backward()`.",
        what_it_does="""In one function, finds `<optimizer>.step()` (a receiver whose name
contains `opt`) or AMP's `<scaler>.step(optimizer)` after a
`backward(retain_graph=True)` and before another `backward()` call: the GAN /
actor-critic pattern.""",
        why_bad="""`optimizer.step()` updates the parameters in place.  The retained graph
saved the old parameter values, so the second `backward()` raises the
"modified by an inplace operation" error (or, with hooks or `.data`, uses
stale values silently).""",
        example="""d_loss.backward(retain_graph=True)
d_opt.step()
g_loss.backward()   # g_loss's graph saved D's old weights""",
        use_instead="""d_loss.backward(retain_graph=True)
g_loss.backward()
d_opt.step()
g_opt.step()
# or recompute the forward pass (e.g. D(fake.detach())) after the step""",
        fix_safety="No automatic fix: the right reordering depends on the algorithm.",
        known_problems="""The rule cannot prove that both `backward()` calls go through the same
graph; `retain_graph=True` is the evidence that a second pass is intended.""",
    ),
]
