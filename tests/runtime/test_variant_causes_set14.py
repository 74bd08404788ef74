"""The general forms behind held-out set 14's misses (tests/errors/variants, `# set: 14`), each on a
program of its own and in another spelling than the variant's: the diagnosis names the marked line,
and its help, applied, makes the program compute what a hand-written version computes; and the cases
each change must leave alone (a correct near-twin runs silent under the doctor)."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    """(source, diagnoses) of the program run under the doctor."""
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def silent(tmp_path, source, name="twin"):
    """The correct near-twin runs under the doctor without an error (and so without a report)."""
    assert run_watched(write(tmp_path, textwrap.dedent(source), name)) is None


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def run_fixed(tmp_path, suggestion, name="program"):
    """The namespace of the program after the suggestion is applied to the file it names."""
    target = tmp_path / os.path.basename(suggestion.location.file)
    target.write_text(apply_suggestion(target.read_text(), suggestion))
    error, namespace = run_plain(str(tmp_path / f"{name}.py"))
    assert error is None, error
    return namespace


AMP_LOOP = """
    import torch
    from torch import nn


    class Loop:
        def __init__(self, model):
            self.model = model
            self.opt = torch.optim.SGD(model.parameters(), lr=0.1)
            self.amp = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

        def clip(self):
            return nn.utils.clip_grad_norm_(self.model.parameters(), 1.0, error_if_nonfinite={flag})  # CLIP

        def run(self, x, y):
            self.opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                out = self.model(x)
            self.amp.scale((out.float() - y).pow(2).mean()).backward()
            self.amp.unscale_(self.opt)
            self.clip()
            self.amp.step(self.opt)
            self.amp.update()


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loop = Loop(model)
    x, y = torch.randn(8, 3) * 10, torch.randn(8, 2)
    for _ in range(5):
        loop.run(x, y)
    weights = [p.detach().clone() for p in model.parameters()]
    """


def test_scaler_held_by_a_trainer_object_is_found_for_clipping_that_refuses_overflow(tmp_path):
    source, diagnoses = diagnose(tmp_path, AMP_LOOP.replace("{flag}", "True"))
    found = only(diagnoses, "AD183")
    assert found.primary.line == marked_line(source, "CLIP")
    assert "self.amp" in " ".join(found.notes)
    namespace = run_fixed(tmp_path, found.help[0])
    _, reference = run_plain(write(tmp_path, textwrap.dedent(AMP_LOOP.replace("{flag}", "False")), "reference"))
    assert all(torch.equal(a, b) for a, b in zip(namespace["weights"], reference["weights"]))
    silent(tmp_path, AMP_LOOP.replace("{flag}", "False"))


def test_clipping_that_refuses_non_finite_gradients_without_a_scaler_is_not_ad183(tmp_path):
    # An object is held, but no GradScaler in it: a NaN gradient here is a real fault, not AMP's overflow.
    _, diagnoses = diagnose(tmp_path, """
        import torch


        class Holder:
            def __init__(self):
                self.w = torch.tensor([1.0, 0.0], requires_grad=True)


        holder = Holder()
        holder.w.sqrt().sum().backward()
        torch.nn.utils.clip_grad_norm_([holder.w], 1.0, error_if_nonfinite=True)
        """)
    assert not [d for d in diagnoses if d.code == "AD183"]


NUMPY_MAX = """
    import numpy as np
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    batches = [torch.randn(4, 3) for _ in range(3)]


    def worst_case_step():
        per_batch = [(x @ w).pow(2).mean() for x in batches]
        worst = {value}  # REDUCE
        worst.backward()
        return worst


    worst = worst_case_step().item()
    gw = w.grad
    """


def test_numpy_reduction_of_losses_that_is_differentiated_becomes_the_torch_reduction(tmp_path):
    source, diagnoses = diagnose(tmp_path, NUMPY_MAX.replace("{value}", "np.max(per_batch)"))
    found = only(diagnoses, "AD113")
    assert found.primary.line == marked_line(source, "REDUCE")
    assert "torch.stack(per_batch).max()" in found.help[0].replacement
    namespace = run_fixed(tmp_path, found.help[0])
    _, reference = run_plain(write(tmp_path, textwrap.dedent(
        NUMPY_MAX.replace("{value}", "torch.stack(per_batch).max()")), "reference"))
    assert namespace["worst"] == reference["worst"] and torch.equal(namespace["gw"], reference["gw"])
    silent(tmp_path, NUMPY_MAX.replace("{value}", "torch.stack(per_batch).max()"))


def test_numpy_mean_of_losses_only_logged_keeps_the_detached_elements(tmp_path):
    # The NumPy value is only logged: detaching the elements is right, torch.stack is not offered.
    source, diagnoses = diagnose(tmp_path, """
        import numpy as np
        import torch

        w = torch.tensor([0.5, -1.0], requires_grad=True)
        history = [(w * k).sum() for k in range(3)]
        average = np.mean(history)  # LOG
        """)
    found = only(diagnoses, "AD113")
    assert found.primary.line == marked_line(source, "LOG")
    assert "torch.stack" not in (found.help[0].replacement or "")
    assert "t.detach() for t in history" in found.help[0].replacement


FGSM_LOOP = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    x, target = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
    z = x.detach().clone().requires_grad_(True)
    for _ in range(3):
        loss = nn.functional.cross_entropy(model(z), target)
        step = torch.autograd.grad(loss, [z])[0].sign()
        z = (z + 0.05 * step).detach(){tail}  # CARRIED
    result = z.detach()
    """


def test_grad_input_rebound_later_in_the_loop_is_traced_to_that_rebinding(tmp_path):
    source, diagnoses = diagnose(tmp_path, FGSM_LOOP.replace("{tail}", ""))
    found = only(diagnoses, "AD306")
    assert found.primary.line == marked_line(source, "CARRIED")
    namespace = run_fixed(tmp_path, found.help[0])
    _, reference = run_plain(write(tmp_path, textwrap.dedent(FGSM_LOOP.replace("{tail}", ".requires_grad_()")),
                                   "reference"))
    assert torch.equal(namespace["result"], reference["result"])
    silent(tmp_path, FGSM_LOOP.replace("{tail}", ".requires_grad_()"))


def test_grad_input_made_before_the_loop_without_requires_grad_is_still_named_there(tmp_path):
    # The first binding does not ask for gradients: it is the one to change, as before.
    source, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0])  # MADE
        for _ in range(2):
            loss = (w ** 2).sum() * torch.tensor(1.0, requires_grad=True)
            (g,) = torch.autograd.grad(loss, w)
            w = (w - 0.1 * g).detach()
        """)
    found = only(diagnoses, "AD306")
    assert found.primary.line == marked_line(source, "MADE")


PROBE = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.ModuleDict({"backbone": nn.Linear(4, 5), "head": nn.Linear(5, 2)})
    net["backbone"].requires_grad_(False)
    opt = torch.optim.Adam(net.{part}.parameters(), lr=0.01)  # BUILT
    scaler = torch.amp.GradScaler("cpu")
    x, y = torch.randn(3, 4), torch.randn(3, 2)
    for _ in range(2):
        opt.zero_grad()
        loss = (net["head"](net["backbone"](x)) - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    weights = [p.detach().clone() for p in net.parameters()]
    """


def test_optimizer_built_on_the_frozen_part_is_built_on_the_trained_part(tmp_path):
    source, diagnoses = diagnose(tmp_path, PROBE.replace("{part}", "backbone"))
    found = only(diagnoses, "AD167")
    assert found.primary.line == marked_line(source, "BUILT")
    namespace = run_fixed(tmp_path, found.help[0])
    _, reference = run_plain(write(tmp_path, textwrap.dedent(PROBE.replace("{part}", "head")), "reference"))
    assert all(torch.equal(a, b) for a, b in zip(namespace["weights"], reference["weights"]))
    silent(tmp_path, PROBE.replace("{part}", "head"))


def test_optimizer_on_a_frozen_part_beside_two_trained_parts_is_left_as_advice(tmp_path):
    # Which of the two trained parts the optimizer was meant for is not known: no change is offered.
    source, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        net = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Linear(2, 2), "c": nn.Linear(2, 1)})
        net["a"].requires_grad_(False)
        opt = torch.optim.SGD(net.a.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.randn(3, 2)
        scaler.scale(net["c"](net["b"](net["a"](x))).sum()).backward()
        scaler.step(opt)  # STEP
        """)
    found = only(diagnoses, "AD167")
    assert found.primary.line == marked_line(source, "STEP")
    assert all(s.replacement is None for s in found.help)
