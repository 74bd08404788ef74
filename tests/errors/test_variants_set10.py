"""The general forms behind held-out set 10's misses (tests/errors/variants, `# set: 10`), each on a
program of its own: the help, applied, makes the program compute what a hand-written version
computes; and the cases each change must leave alone."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    source = textwrap.dedent(source)
    path = write(tmp_path, source, name)
    error = run_watched(path)
    assert error is not None
    return source, path, autograd_doctor.diagnoses_of(error)


def fixed_namespace(tmp_path, source, suggestion, name="fixed"):
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, suggestion), name))
    assert error is None, error
    return namespace


def test_function_decorated_with_set_grad_enabled_false_is_named_at_its_decorator(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0], requires_grad=True)


        @torch.set_grad_enabled(False)  # DECORATOR
        def score(x):
            return (w * x).sum()


        loss = score(torch.tensor([3.0, 4.0]))
        loss.backward()
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD307"]
    assert diagnosis.primary.line == marked_line(source, "DECORATOR")
    assert "@torch.set_grad_enabled(False)" in diagnosis.help[0].message
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["grad"], torch.tensor([3.0, 4.0]))


def test_set_grad_enabled_false_called_as_a_function_is_not_taken_for_a_decorator(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0], requires_grad=True)


        def score(x):
            torch.set_grad_enabled(False)
            value = (w * x).sum()
            torch.set_grad_enabled(True)
            return value


        loss = score(torch.tensor([3.0, 4.0]))
        loss.backward()
    """)
    assert "AD307" not in [d.code for d in diagnoses]


def test_mark_dirty_function_that_writes_its_input_then_returns_an_out_of_place_call_writes_that_call_in_place(
        tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class CentreAndScale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.sub_(x.mean())
                ctx.mark_dirty(x)
                return x.mul(2.0)  # RETURN

            @staticmethod
            def backward(ctx, grad):
                return grad * 2.0


        w = torch.tensor([1.0, 2.0, 6.0], requires_grad=True)
        out = CentreAndScale.apply(w * 1.0)
        out.sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD121"]
    assert diagnosis.primary.line == marked_line(source, "RETURN")
    assert diagnosis.help[0].replacement == "return x.mul_(2.0)"
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["out"].detach(), torch.tensor([-4.0, -2.0, 6.0]))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))


def test_mark_dirty_function_that_writes_its_input_then_returns_a_copy_still_returns_the_input(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class ClampInPlace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.clamp_(min=0.0)
                ctx.mark_dirty(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad


        out = ClampInPlace.apply(torch.tensor([1.0, -2.0], requires_grad=True) * 1.0)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD121"]
    assert diagnosis.help[0].replacement == "return x"


def test_input_flagged_to_require_grad_after_the_output_was_computed_is_flagged_before(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([2.0, 3.0], requires_grad=True)
        x = torch.tensor([1.0, 4.0])
        y = (w * x).pow(2).sum()
        x.requires_grad_()  # FLAG
        (gx,) = torch.autograd.grad(y, x)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD305"]
    assert diagnosis.primary.line == marked_line(source, "FLAG")
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["gx"], torch.tensor([8.0, 72.0]))  # d/dx (w x)^2 = 2 w^2 x


def test_input_flagged_after_use_but_reassigned_between_gets_no_move(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([2.0, 3.0], requires_grad=True)
        x = torch.tensor([1.0, 4.0])
        y = (w * x).sum()
        x = x * 2
        x.requires_grad_()
        (gx,) = torch.autograd.grad(y, x)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD305"]
    assert not any(s.replacement and "requires_grad_()" in s.replacement for s in diagnosis.help)


def test_flat_pieces_given_as_grad_outputs_are_shaped_like_their_outputs(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        a = torch.ones(2, 3, requires_grad=True)
        b = torch.ones(4, requires_grad=True)
        outputs = [a * 2.0, b * 3.0]
        flat = torch.arange(10.0)
        pieces = list(flat.split([6, 4]))  # PIECES
        ga, gb = torch.autograd.grad(outputs, [a, b], grad_outputs=pieces)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    assert diagnosis.primary.line == marked_line(source, "PIECES")
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["ga"], torch.arange(6.0).view(2, 3) * 2.0)
    assert torch.equal(namespace["gb"], torch.arange(6.0, 10.0) * 3.0)


def test_pieces_with_other_numbers_of_elements_than_their_outputs_are_not_reshaped(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, """
        import torch

        a = torch.ones(2, 3, requires_grad=True)
        b = torch.ones(4, requires_grad=True)
        outputs = [a * 2.0, b * 3.0]
        pieces = list(torch.arange(10.0).split([4, 6]))
        ga, gb = torch.autograd.grad(outputs, [a, b], grad_outputs=pieces)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    assert not any(s.replacement and "view_as" in s.replacement for s in diagnosis.help)


def test_model_built_under_a_float16_default_dtype_is_built_in_float32(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.set_default_dtype(torch.float16)  # DEFAULT
        model = nn.Linear(2, 1)
        torch.set_default_dtype(torch.float32)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.tensor([[1.0, 2.0]], dtype=next(model.parameters()).dtype)
        scaler.scale(model(x).float().sum()).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        dtype = model.weight.dtype
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD151"]
    assert diagnosis.primary.line == marked_line(source, "DEFAULT")
    assert diagnosis.help[0].replacement == "torch.set_default_dtype(torch.float32)"
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert namespace["dtype"] == torch.float32


CONTEXT_MANAGER_PROGRAM = """
    import contextlib

    import torch

    w = torch.tensor([1.0, 2.0], requires_grad=True)
    calls = []


    @contextlib.contextmanager
    def counted():
        calls.append(1)
{block}


    with counted():
        loss = (w * torch.tensor([3.0, 4.0])).sum()
    loss.backward()
    grad = w.grad
"""


def test_loss_inside_a_context_manager_that_turns_gradients_off_around_its_yield_drops_that_block(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, CONTEXT_MANAGER_PROGRAM.format(block=(
        "        with torch.no_grad():  # BLOCK\n"
        "            yield")))
    (diagnosis,) = [d for d in diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == marked_line(source, "BLOCK")
    assert diagnosis.help[0].replacement == "yield"
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["grad"], torch.tensor([3.0, 4.0]))


def test_context_manager_whose_grad_off_block_does_not_hold_its_yield_is_not_named(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, CONTEXT_MANAGER_PROGRAM.format(block=(
        "        with torch.no_grad():\n"
        "            w.mul_(1.0)\n"
        "        yield")).replace("loss = (w * torch.tensor([3.0, 4.0])).sum()",
                                "loss = (w * torch.tensor([3.0, 4.0])).sum().detach()"))
    assert not any(d.primary is not None and "with torch.no_grad()" in (d.primary.source or "")
                   for d in diagnoses)


def test_deepcopy_of_a_pruned_model_keeps_the_pruned_weight_without_history_first(tmp_path):
    program = """
        import copy

        import torch
        from torch import nn
        from torch.nn.utils import prune

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
        x = torch.randn(4, 3)
        model(x).sum().backward()
        prune.l1_unstructured(model[0], "weight", amount=0.5)
        snapshot = copy.deepcopy(model)  # COPY
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
        trained = model(x).detach()
        kept = snapshot(x).detach()
    """
    source, path, diagnoses = diagnose(tmp_path, program)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD303"]
    assert diagnosis.primary.line == marked_line(source, "COPY")
    assert diagnosis.help[0].replacement == ("model[0].weight = model[0].weight.detach()\n"
                                             "snapshot = copy.deepcopy(model)")
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    # The reference: the same training with the snapshot made by hand from the pruned values.
    reference = textwrap.dedent(program).replace("snapshot = copy.deepcopy(model)  # COPY", (
        "snapshot = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))\n"
        "with torch.no_grad():\n"
        "    snapshot[0].weight.copy_(model[0].weight)\n"
        "    snapshot[0].bias.copy_(model[0].bias)\n"
        "    snapshot[2].weight.copy_(model[2].weight)\n"
        "    snapshot[2].bias.copy_(model[2].bias)"))
    error, expected = run_plain(write(tmp_path, reference, "reference"))
    assert error is None, error
    assert torch.allclose(namespace["trained"], expected["trained"])
    assert torch.allclose(namespace["kept"], expected["kept"])
    assert (namespace["model"][0].weight == 0).sum() == 4  # still pruned after training


CHECKPOINTED_LOGGER = """
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 2)
            self.calls = 0
            self.logged = []

        def forward(self, x):
            self.calls += 1
            h = torch.tanh(self.layer(x))
            if self.calls % 2 == 1:
{body}
            return h * 2.0


    torch.manual_seed(0)
    block = Block()
    x = torch.randn(3, 2)
    checkpoint(block, x, use_reentrant=False).sum().backward()
    grad = block.layer.weight.grad
"""


def test_checkpointed_branch_that_only_logs_numbers_is_run_under_no_grad(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, CHECKPOINTED_LOGGER.format(
        body="                self.logged.append(h.pow(2).mean().item())  # LOG"))
    (diagnosis,) = [d for d in diagnoses if d.code == "AD125"]
    assert diagnosis.primary.line == marked_line(source, "LOG")
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    reference = CHECKPOINTED_LOGGER.format(body="                pass").replace(
        "checkpoint(block, x, use_reentrant=False)", "block(x)")
    error, expected = run_plain(write(tmp_path, textwrap.dedent(reference), "reference"))
    assert error is None
    assert torch.allclose(namespace["grad"], expected["grad"])
    assert len(namespace["block"].logged) == 1


def test_checkpointed_branch_that_keeps_a_tensor_is_not_put_under_no_grad(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, CHECKPOINTED_LOGGER.format(
        body="                self.logged.append(h.pow(2).mean())"))
    (diagnosis,) = [d for d in diagnoses if d.code == "AD125"]
    assert not any(s.replacement and "no_grad" in s.replacement for s in diagnosis.help)


def test_set_grad_enabled_decorator_is_named_over_a_no_grad_decorator_of_the_same_name_from_an_earlier_program(
        tmp_path):
    # Mode entries are kept across the programs one process runs (pytest, a notebook).
    earlier = write(tmp_path, textwrap.dedent("""
        import torch

        w = torch.tensor([1.0], requires_grad=True)


        @torch.no_grad()
        def predict(x):
            return w * x


        predict(torch.tensor([2.0])).sum().backward()
    """), "earlier")
    assert run_watched(earlier) is not None
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0], requires_grad=True)


        @torch.set_grad_enabled(False)  # DECORATOR
        def predict(x):
            return (w * x).sum()


        loss = predict(torch.tensor([3.0, 4.0]))
        loss.backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD307"]
    assert diagnosis.primary.file == path and diagnosis.primary.line == marked_line(source, "DECORATOR")
