"""Causes found by held-out variants set 27 (docs/errors.md, "Held-out variants", set 27), each tested on
another program of the same cause (not the variant) and on a correct near-twin; the variants themselves
are run by tests/errors/test_held_out_variants.py.

AD130: an in-place LeakyReLU written as a statement into a parameter of the function it is in, which
the function does not read again (a forward hook's `output`), had the help "output = F.leaky_relu(output,
..., inplace=False)": the rebound parameter does not reach the caller, so the activation was lost (a
wrong help). A forward hook registered on the user's modules now returns the result (its returned value
replaces the module's output); any other such function gets no concrete change.

AD307: `model.forward = torch.no_grad()(model.forward)` on a module whose forward is torch's own
(nn.Sequential, nn.Linear) was not recorded (only the user's own functions were), so the cut was not
named (AD301's generic "check the function called here" instead). A decorator called at run time on a
method bound to a module whose own `__dict__` now holds its replacement is recorded, matched by the
instance's forward, and its help (delete the wrapping statement) is put first."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# A forward hook registered directly (no partial) that activates a conv layer's output with the in-place
# function F.leaky_relu_ and a negative slope.
CONV_HOOK_LEAKY_UNDERSCORE = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    def mirror_leaky(module, args, out):
        F.leaky_relu_(out, -0.3)  # WRITE

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv1d(2, 3, 3, padding=1), nn.Conv1d(3, 1, 1))
    net[0].register_forward_hook(mirror_leaky)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        loss = net(torch.randn(4, 2, 5)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in net.parameters()]
"""

CONV_HOOK_LEAKY_CORRECT = CONV_HOOK_LEAKY_UNDERSCORE.replace("F.leaky_relu_(out, -0.3)  # WRITE",
                                                             "return F.leaky_relu(out, -0.3)")

# The same write in a plain helper the forward calls for its effect on the caller's tensor: out of place,
# the result would have to be returned and bound by the caller, a change of two places: no concrete change.
HELPER_ACTIVATES_ARGUMENT = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    def activate(h):
        F.leaky_relu(h, -0.1, inplace=True)  # WRITE

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden, self.out = nn.Linear(3, 4), nn.Linear(4, 1)

        def forward(self, x):
            h = self.hidden(x)
            activate(h)
            return self.out(h)

    torch.manual_seed(0)
    Net()(torch.randn(5, 3)).sum().backward()
"""


def test_a_forward_hooks_in_place_activation_is_returned(tmp_path):
    outcome = run_as_script(tmp_path, CONV_HOOK_LEAKY_UNDERSCORE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD130", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == "return F.leaky_relu(out, -0.3)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CONV_HOOK_LEAKY_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_hook_that_returns_its_activation_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, CONV_HOOK_LEAKY_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_helper_that_activates_its_argument_gets_no_rebinding(tmp_path):
    outcome = run_as_script(tmp_path, HELPER_ACTIVATES_ARGUMENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD130", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert all(not suggestion.replacement for suggestion in diagnosis.help), diagnosis.help


# nn.Linear's own forward wrapped by calling the decorator, in the same file, before a regression head is
# trained on frozen features.
LINEAR_FORWARD_WRAPPED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    features = torch.randn(10, 4)
    head = nn.Linear(4, 1)
    head.forward = torch.no_grad()(head.forward)  # WRAP
    print(head(features[:2]))
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for _ in range(2):
        loss = (head(features) - 1.0).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in head.parameters()]
"""

LINEAR_FORWARD_CORRECT = LINEAR_FORWARD_WRAPPED.replace("    head.forward = torch.no_grad()(head.forward)  # WRAP\n", "")

# A teacher nn.Sequential whose forward is wrapped the same way gives the targets; a student is trained:
# correct, and silent.
TEACHER_FORWARD_WRAPPED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    teacher.forward = torch.no_grad()(teacher.forward)
    student = nn.Sequential(nn.Linear(3, 2))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for _ in range(2):
        x = torch.randn(6, 3)
        loss = (student(x) - teacher(x)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_library_forward_wrapped_by_calling_no_grad_is_named(tmp_path):
    outcome = run_as_script(tmp_path, LINEAR_FORWARD_WRAPPED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD307", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRAP")
    change = diagnosis.help[0]
    assert change.location.line == outcome.line("WRAP") and change.deletes_statement
    lines = outcome.source.splitlines(keepends=True)
    del lines[change.location.line - 1]  # the help deletes the line
    fixed = run_plain(tmp_path, "".join(lines), "fixed.py")
    correct = run_plain(tmp_path, LINEAR_FORWARD_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_a_wrapped_teacher_beside_a_trained_student_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, TEACHER_FORWARD_WRAPPED)
    assert outcome.error is None and not outcome.diagnoses


# A dropout-like Function that saves its `training` flag with the mask; backward reads the flag only as the
# condition of an if.
DROPOUT_SAVES_TRAINING_FLAG = """
    import torch
    from torch import nn

    class MaskedScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, mask, training):
            ctx.save_for_backward(mask, training)  # SAVE
            return x * mask * 2.0 if training else x

        @staticmethod
        def backward(ctx, grad_output):
            mask, training = ctx.saved_tensors
            if training:
                return grad_output * mask * 2.0, None, None
            return grad_output, None, None

    torch.manual_seed(0)
    layer = nn.Linear(4, 3)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    for step in range(2):
        mask = (torch.rand(5, 3) > 0.5).float()
        loss = MaskedScale.apply(layer(torch.randn(5, 4)), mask, step == 0).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in layer.parameters()]
"""

DROPOUT_FLAG_ON_CTX = DROPOUT_SAVES_TRAINING_FLAG.replace(
    "            ctx.save_for_backward(mask, training)  # SAVE\n",
    "            ctx.save_for_backward(mask)  # SAVE\n            ctx.training = training\n").replace(
    "            mask, training = ctx.saved_tensors\n            if training:",
    "            (mask,) = ctx.saved_tensors\n            if ctx.training:")

# The flag negated in backward (`-True` is -1, a bool tensor refuses `-`): no tensor is offered.
FLAG_NEGATED_IN_BACKWARD = """
    import torch

    class SignFlip(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, flip):
            ctx.save_for_backward(x, flip)  # SAVE
            return -x if flip else x

        @staticmethod
        def backward(ctx, grad_output):
            x, flip = ctx.saved_tensors
            return grad_output * (-flip * 2 + 1), None

    x = torch.randn(3, requires_grad=True)
    SignFlip.apply(x, True).sum().backward()
"""


def test_a_flag_backward_only_tests_is_saved_as_a_tensor(tmp_path):
    outcome = run_as_script(tmp_path, DROPOUT_SAVES_TRAINING_FLAG)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD122", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SAVE")
    assert diagnosis.help[0].replacement == "ctx.save_for_backward(mask, torch.tensor(training))"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, DROPOUT_FLAG_ON_CTX, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_flag_kept_on_ctx_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, DROPOUT_FLAG_ON_CTX)
    assert outcome.error is None and not outcome.diagnoses


def test_a_flag_negated_in_backward_gets_no_tensor(tmp_path):
    outcome = run_as_script(tmp_path, FLAG_NEGATED_IN_BACKWARD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD122", [d.code for d in outcome.diagnoses]
    assert all(not suggestion.replacement for suggestion in diagnosis.help), diagnosis.help


# A layer's forward re-bound to run under the non-reentrant checkpoint, in the same file, with
# `from functools import partial`; an input-gradient penalty takes torch.func.jacrev of the model.
LAYER_FORWARD_REBOUND_UNDER_JACREV = """
    import torch
    from functools import partial
    from torch import nn
    from torch.func import jacrev
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    model[0].forward = partial(checkpoint, model[0].forward, use_reentrant=False)  # REBIND
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x = torch.randn(3)
        penalty = jacrev(model)(x).pow(2).sum()
        optimizer.zero_grad()
        penalty.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in model.parameters()]
"""

LAYER_FORWARD_PLAIN_UNDER_JACREV = LAYER_FORWARD_REBOUND_UNDER_JACREV.replace(
    "    model[0].forward = partial(checkpoint, model[0].forward, use_reentrant=False)  # REBIND\n", "")

# The same re-binding in a model trained with backward() alone (no torch.func transform): correct, silent.
LAYER_FORWARD_REBOUND_PLAIN_TRAINING = """
    import torch
    from functools import partial
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    model[0].forward = partial(checkpoint, model[0].forward, use_reentrant=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        loss = model(torch.randn(4, 3)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_forward_rebound_to_checkpoint_under_jacrev_is_named(tmp_path):
    outcome = run_as_script(tmp_path, LAYER_FORWARD_REBOUND_UNDER_JACREV)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD233", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("REBIND")
    change = diagnosis.help[0]
    assert change.location.line == outcome.line("REBIND") and change.deletes_statement
    lines = outcome.source.splitlines(keepends=True)
    del lines[change.location.line - 1]  # the help deletes the line
    fixed = run_plain(tmp_path, "".join(lines), "fixed.py")
    correct = run_plain(tmp_path, LAYER_FORWARD_PLAIN_UNDER_JACREV, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_a_forward_rebound_to_checkpoint_in_plain_training_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, LAYER_FORWARD_REBOUND_PLAIN_TRAINING)
    assert outcome.error is None and not outcome.diagnoses


# A teacher nn.Sequential wrapped by calling no_grad gives the targets; the student, another nn.Sequential,
# is cut by a detach() of its own: the cut is not the teacher's wrap (AD307 must not name it).
TEACHER_WRAPPED_STUDENT_DETACHED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(3, 2))
    teacher.forward = torch.no_grad()(teacher.forward)
    student = nn.Sequential(nn.Linear(3, 2))
    x = torch.randn(6, 3)
    prediction = student(x).detach()  # CUT
    loss = (prediction - teacher(x)).pow(2).mean()
    loss.backward()
"""


def test_a_wrapped_teacher_is_not_taken_for_a_students_cut(tmp_path):
    outcome = run_as_script(tmp_path, TEACHER_WRAPPED_STUDENT_DETACHED)
    assert outcome.error is not None
    assert "AD307" not in [d.code for d in outcome.diagnoses], [(d.code, d.primary) for d in outcome.diagnoses]
