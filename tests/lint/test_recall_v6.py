"""Recall on the causes of misses in the r90-r111 re-creations: each case the
linter now reports really fails, its corrected twin stays silent and computes
the values and gradients of a reference, and a similar correct pattern stays
silent (and really runs)."""

from __future__ import annotations

import copy
import textwrap

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


# A row written through an index that is an int for certain (`for i in range(n)`)
# is a view of the tensor: the product keeps `f[i - 1]`, and the next write breaks it.
RECURRENCE = textwrap.dedent("""
    import torch

    def chain(steps=4):
        w = torch.tensor(0.5, requires_grad=True)
        f = torch.zeros(steps)
        f[0] = 1.0
        for i in range(1, steps):
            f[i] = f[i - 1] * w
        return f, w
    """)

RECURRENCE_FIXED = textwrap.dedent("""
    import torch

    def chain(steps=4):
        w = torch.tensor(0.5, requires_grad=True)
        rows = [torch.ones(())]
        for i in range(1, steps):
            rows.append(rows[i - 1] * w)
        return torch.stack(rows), w
    """)

# The same loop over lists of indices: advanced indexing copies, nothing is kept.
RECURRENCE_COPIES = textwrap.dedent("""
    import torch

    def chain():
        w = torch.tensor(0.5, requires_grad=True)
        f = torch.zeros(4)
        f[0] = 1.0
        for i, j in ([[0], [1]], [[1], [2]], [[2], [3]]):
            f[j] = f[i] * w
        return f, w
    """)


def test_write_through_a_range_index_after_a_save_of_the_previous_row_is_found():
    assert _findings(RECURRENCE) == [(9, "ADL001")]
    f, _ = _load(RECURRENCE)["chain"]()
    with pytest.raises(RuntimeError, match="inplace operation"):
        f.sum().backward()


def test_recurrence_collected_in_a_list_is_silent_and_matches_the_closed_form():
    assert _findings(RECURRENCE_FIXED) == []
    f, w = _load(RECURRENCE_FIXED)["chain"]()
    f.sum().backward()
    ref_w = torch.tensor(0.5, requires_grad=True)
    ref = torch.stack([ref_w ** k for k in range(4)])
    ref.sum().backward()
    assert torch.equal(f.detach(), ref.detach())
    assert torch.allclose(w.grad, ref_w.grad)  # 1 + 2w + 3w^2, summed in another order


def test_rows_written_through_advanced_indices_are_silent_and_run():
    assert _findings(RECURRENCE_COPIES) == []
    f, w = _load(RECURRENCE_COPIES)["chain"]()
    f.sum().backward()  # no error: `f[i]` was a copy
    assert w.grad is not None


# A factory tensor given a value with a graph (`b[0] = w * 2`) carries that graph:
# `sin(b)` keeps `b`, and the write to `b[1]` after it breaks the backward.
FILLED = textwrap.dedent("""
    import torch

    def fill():
        w = torch.ones(3, requires_grad=True)
        b = torch.zeros(2, 3)
        b[0] = w * 2
        c = torch.sin(b)
        b[1] = 1.0
        return c.sum(), w
    """)

FILLED_FIXED = textwrap.dedent("""
    import torch

    def fill():
        w = torch.ones(3, requires_grad=True)
        b = torch.stack([w * 2, torch.ones(3)])
        c = torch.sin(b)
        return c.sum(), w
    """)

FILLED_WITHOUT_GRAPH = textwrap.dedent("""
    import torch

    def fill():
        w = torch.ones(3, requires_grad=True)
        b = torch.zeros(2, 3)
        b[0] = w.detach() * 2
        c = torch.sin(b)
        b[1] = 1.0
        return c.sum() + w.sum(), w
    """)


def test_write_after_a_save_of_a_factory_tensor_that_holds_a_graph_is_found():
    assert _findings(FILLED) == [(9, "ADL001")]
    loss, _ = _load(FILLED)["fill"]()
    with pytest.raises(RuntimeError, match="inplace operation"):
        loss.backward()


def test_filled_tensor_built_out_of_place_is_silent_and_has_the_reference_gradient():
    assert _findings(FILLED_FIXED) == []
    loss, w = _load(FILLED_FIXED)["fill"]()
    loss.backward()
    ref_w = torch.ones(3, requires_grad=True)
    ref = torch.sin(ref_w * 2).sum() + torch.sin(torch.ones(3)).sum()  # what fill() meant
    ref.backward()
    assert torch.allclose(loss.detach(), ref.detach())  # six terms summed in another order
    assert torch.equal(w.grad, ref_w.grad)


def test_factory_tensor_given_a_detached_value_is_silent_and_runs():
    assert _findings(FILLED_WITHOUT_GRAPH) == []
    loss, w = _load(FILLED_WITHOUT_GRAPH)["fill"]()
    loss.backward()  # sin(b) kept nothing that needs b
    assert torch.equal(w.grad, torch.ones(3))


# Local names for held modules and optimizers (`aug, opt_a = self.aug, self.opt_a`,
# `aug = aug.train()`) stand for them: the step of `opt_a` updates the layers that
# `aug(x)` used, and the second backward goes through that call's graph.
ALIASED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Trainer:
        def __init__(self):
            self.aug = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3))
            self.cls = nn.Linear(3, 1)
            self.opt_a = torch.optim.SGD(self.aug.parameters(), lr=0.1)
            self.opt_c = torch.optim.SGD(self.cls.parameters(), lr=0.1)

        def step(self, x):
            aug, cls = self.aug, self.cls
            opt_a, opt_c = self.opt_a, self.opt_c
            aug = aug.train()
            out = cls(aug(x))
            loss_a = -out.mean()
            loss_a.backward(retain_graph=True)
            opt_a.step()
            loss_c = out.pow(2).mean()
            loss_c.backward()
            opt_c.step()
    """)

ALIASED_FIXED = ALIASED.replace(
    """        loss_a.backward(retain_graph=True)
        opt_a.step()
        loss_c = out.pow(2).mean()
        loss_c.backward()
""", """        loss_c = out.pow(2).mean()
        loss_a.backward(retain_graph=True)
        loss_c.backward()
        opt_a.step()
""")

# The same aliases where the stepped optimizer updates a module the old graph does
# not go through (the classifier's step, then the augmentor's second loss).
ALIASED_OTHER_MODULE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Trainer:
        def __init__(self):
            self.aug = nn.Linear(3, 3)
            self.cls = nn.Linear(3, 1)
            self.opt_c = torch.optim.SGD(self.cls.parameters(), lr=0.1)

        def step(self, x):
            aug, opt_c = self.aug, self.opt_c
            feat = aug(x)
            loss_c = self.cls(feat.detach()).mean()
            loss_c.backward()
            opt_c.step()
            loss_a = feat.pow(2).mean()
            loss_a.backward()
    """)


def test_step_of_an_aliased_optimizer_before_backward_through_an_aliased_module_is_found():
    assert _findings(ALIASED) == [(19, "ADL003")]
    torch.manual_seed(0)
    with pytest.raises(RuntimeError, match="inplace operation"):
        _load(ALIASED)["Trainer"]().step(torch.randn(4, 3))


def test_aliased_backwards_before_the_step_are_silent_and_match_a_reference():
    assert ALIASED_FIXED != ALIASED
    assert _findings(ALIASED_FIXED) == []
    torch.manual_seed(0)
    trainer = _load(ALIASED_FIXED)["Trainer"]()
    aug, cls = copy.deepcopy(trainer.aug), copy.deepcopy(trainer.cls)
    x = torch.randn(4, 3)
    trainer.step(x)
    out = cls(aug(x))
    (-out.mean() + out.pow(2).mean()).backward()
    with torch.no_grad():
        for module, reference in ((trainer.aug, aug), (trainer.cls, cls)):
            for got, p in zip(module.parameters(), reference.parameters()):
                assert torch.allclose(got, p - 0.1 * p.grad)


def test_aliased_step_of_a_module_the_old_graph_does_not_use_is_silent_and_runs():
    assert _findings(ALIASED_OTHER_MODULE) == []
    torch.manual_seed(0)
    trainer = _load(ALIASED_OTHER_MODULE)["Trainer"]()
    trainer.step(torch.randn(4, 3))  # no error: the step changed only the classifier
    assert trainer.aug.weight.grad is not None


# A layer class given as a parameter's default (`activation=nn.LeakyReLU`) builds
# that layer when called: the in-place dropout after it overwrites the output the
# in-place LeakyReLU saved.
LAYER_CLASS_PARAMETER = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Critic(nn.Module):
        def __init__(self, activation=nn.LeakyReLU):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), activation(0.2, inplace=True),
                                      nn.Dropout(p=0.5, inplace=True))
            self.out = nn.Linear(8, 1)

        def forward(self, x):
            return self.out(self.body(x))
    """)

LAYER_CLASS_PARAMETER_FIXED = LAYER_CLASS_PARAMETER.replace("nn.Dropout(p=0.5, inplace=True)", "nn.Dropout(p=0.5)")

# The same parameter before a layer that writes nothing in place: silent.
LAYER_CLASS_PARAMETER_THEN_LINEAR = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Critic(nn.Module):
        def __init__(self, activation=nn.LeakyReLU):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), activation(0.2, inplace=True), nn.Linear(8, 8))
            self.out = nn.Linear(8, 1)

        def forward(self, x):
            return self.out(self.body(x))
    """)


def test_inplace_dropout_after_a_layer_class_parameter_default_is_found():
    assert _findings(LAYER_CLASS_PARAMETER) == [(9, "ADL001")]
    torch.manual_seed(0)
    critic = _load(LAYER_CLASS_PARAMETER)["Critic"]()
    with pytest.raises(RuntimeError, match="inplace operation"):
        critic(torch.randn(3, 4)).sum().backward()


def test_out_of_place_dropout_after_the_parameter_is_silent_and_matches_a_reference():
    assert LAYER_CLASS_PARAMETER_FIXED != LAYER_CLASS_PARAMETER
    assert _findings(LAYER_CLASS_PARAMETER_FIXED) == []
    torch.manual_seed(0)
    critic = _load(LAYER_CLASS_PARAMETER_FIXED)["Critic"]()
    critic.eval()  # dropout off, so the reference needs no random mask
    x = torch.randn(3, 4)
    critic(x).sum().backward()
    first, out = critic.body[0], critic.out
    reference = out(torch.nn.functional.leaky_relu(first(x), 0.2)).sum()
    grads = torch.autograd.grad(reference, [first.weight, out.weight])
    assert torch.allclose(first.weight.grad, grads[0])
    assert torch.allclose(out.weight.grad, grads[1])


def test_layer_class_parameter_before_a_linear_layer_is_silent_and_runs():
    assert _findings(LAYER_CLASS_PARAMETER_THEN_LINEAR) == []
    torch.manual_seed(0)
    critic = _load(LAYER_CLASS_PARAMETER_THEN_LINEAR)["Critic"]()
    critic(torch.randn(3, 4)).sum().backward()  # no error: nothing overwrites the saved output
    assert critic.body[0].weight.grad is not None


# A row picked by an int index (`mem[i]`, `i` from `range`) is a view: stored in a
# list while the loop writes `mem` in place, every entry shows the last values.
ROWS_STORED = textwrap.dedent("""
    import torch

    def collect():
        mem = torch.zeros(3, 2)
        rows = []
        for i in range(3):
            mem += 1
            rows.append(mem[i])
        return rows
    """)

# Code that replaces the list's entries by clones of themselves ("break the
# reference", cleanrl's episodic memories) keeps the views on purpose: silent.
ROWS_STORED_ON_PURPOSE = ROWS_STORED.replace(
    "        rows.append(mem[i])\n",
    "        rows.append(mem[i])\n        rows[i] = rows[i].clone()\n")


def test_row_view_stored_while_the_loop_writes_its_base_is_found():
    assert _findings(ROWS_STORED) == [(9, "ADL011")]
    rows = _load(ROWS_STORED)["collect"]()
    assert torch.equal(rows[0], torch.full((2,), 3.0))  # not 1: the row shows the last values


def test_entries_replaced_by_their_clones_are_silent_and_keep_their_values():
    assert ROWS_STORED_ON_PURPOSE != ROWS_STORED
    assert _findings(ROWS_STORED_ON_PURPOSE) == []
    rows = _load(ROWS_STORED_ON_PURPOSE)["collect"]()
    assert [r[0].item() for r in rows] == [1.0, 2.0, 3.0]
