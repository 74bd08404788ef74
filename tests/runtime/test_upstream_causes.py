"""Causes upstream of the line that raised: a grad-mode switch still in force from a helper
several calls away, and a deepcopy that fails because of the legacy weight_norm."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import Outcome, apply_help, run_as_script, run_plain


def run_program(tmp_path, source: str) -> Outcome:
    try:
        return run_as_script(tmp_path, source)
    finally:
        torch.set_grad_enabled(True)  # the programs below leave gradients off on purpose


SWITCH_THREE_CALLS_UP = """
    import torch
    from torch import nn


    def evaluate(model, batch):
        torch.set_grad_enabled(False)  # SWITCH
        return model(batch).mean().item()


    def log_metrics(model, batch):
        return {"val": evaluate(model, batch)}  # CALLER


    def report(model, batch):
        print(log_metrics(model, batch))


    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = torch.randn(4, 3)
    for step in range(3):
        loss = model(batch).pow(2).mean()
        loss.backward()  # BACKWARD
        opt.step()
        opt.zero_grad()
        report(model, batch)
"""


def test_a_set_grad_enabled_false_still_in_force_is_named(tmp_path):
    outcome = run_program(tmp_path, SWITCH_THREE_CALLS_UP)
    assert "does not require grad" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == outcome.line("SWITCH")
    assert "nothing turns them on again" in diagnosis.primary.note
    lines = {loc.line for loc in diagnosis.related}
    assert {outcome.line("CALLER"), outcome.line("BACKWARD")} <= lines
    assert "the model itself is fine" in diagnosis.notes[0]
    assert not any("detach()" in s.message for s in diagnosis.help)


def test_the_switch_help_applied_trains_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, SWITCH_THREE_CALLS_UP)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    help = diagnosis.help[0]
    fixed = apply_replacement(outcome.source, help.location, help.replacement)
    assert "with torch.no_grad():" in fixed
    try:
        namespace = run_plain(tmp_path, fixed)
    finally:
        torch.set_grad_enabled(True)
    intended = textwrap.dedent(SWITCH_THREE_CALLS_UP).replace(
        "    torch.set_grad_enabled(False)  # SWITCH\n    return model(batch).mean().item()",
        "    with torch.no_grad():\n        return model(batch).mean().item()")
    assert intended != textwrap.dedent(SWITCH_THREE_CALLS_UP)
    reference = run_plain(tmp_path, intended, "reference.py")
    assert torch.is_grad_enabled()
    for name in ("weight", "bias"):
        assert torch.equal(getattr(namespace["model"], name), getattr(reference["model"], name))
    torch.manual_seed(0)
    assert not torch.equal(namespace["model"].weight, torch.nn.Linear(3, 1).weight)  # it trained


def test_a_set_grad_enabled_block_or_a_switch_turned_back_on_is_not_blamed(tmp_path):
    for body in ("with torch.set_grad_enabled(False):\n    model(batch)\n",
                 "torch.set_grad_enabled(False)\nmodel(batch)\ntorch.set_grad_enabled(True)\n"):
        outcome = run_program(tmp_path, "import torch\n"
                                        "model = torch.nn.Linear(3, 1)\nbatch = torch.ones(2, 3)\n" + body +
                              "loss = model(batch).detach().sum()\nloss.backward()\n")
        assert outcome.error is not None
        for diagnosis in outcome.diagnoses:
            assert "set_grad_enabled" not in diagnosis.primary.source


def test_deepcopy_after_legacy_weight_norm_quotes_pytorchs_whole_message(tmp_path):
    outcome = run_program(tmp_path, """
        import copy
        import torch
        from torch import nn

        model = nn.Sequential(nn.utils.weight_norm(nn.Linear(3, 4)), nn.Linear(4, 1))  # APPLIED
        model(torch.ones(2, 3)).sum().backward()
        ema = copy.deepcopy(model)  # COPY
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD303"]
    assert diagnosis.primary.line == outcome.line("APPLIED")
    assert outcome.line("COPY") in {loc.line for loc in diagnosis.related}
    message = str(outcome.error.args[0])
    assert "weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001" in message
    assert any(note == f'PyTorch: "{message}"' for note in diagnosis.notes)
    assert "parametrizations.weight_norm(" in diagnosis.help[0].replacement
    for location in diagnosis.related:
        assert location.file == outcome.path  # never a line inside torch


def test_legacy_weight_norm_imported_by_name_gets_the_import_changed(tmp_path):
    # `from torch.nn.utils import weight_norm` then `weight_norm(conv)`: the line to change is
    # the import (the call has the same signature in torch.nn.utils.parametrizations); other
    # names imported on that line stay.
    source = """
        import copy
        import torch
        from torch import nn
        from torch.nn.utils import clip_grad_norm_, weight_norm  # IMPORT

        torch.manual_seed(0)
        encoder = nn.Sequential(weight_norm(nn.Conv1d(2, 3, 3), dim=0), nn.Tanh())  # APPLIED
        signal = torch.randn(4, 2, 9)
        average = copy.deepcopy(encoder)  # COPY
        loss = encoder(signal).pow(2).mean()
        loss.backward()
        clip_grad_norm_(encoder.parameters(), 10.0)
        grads = [loss.detach(), encoder(signal).detach(), average(signal).detach()]
    """
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD303"]
    assert diagnosis.primary.line == outcome.line("IMPORT")
    assert {outcome.line("APPLIED"), outcome.line("COPY")} <= {loc.line for loc in diagnosis.related}
    assert diagnosis.help[0].replacement == ("from torch.nn.utils import clip_grad_norm_\n"
                                             "from torch.nn.utils.parametrizations import weight_norm")
    assert diagnosis.help[0].message.startswith("import weight_norm from torch.nn.utils.parametrizations")
    # Applied, the program runs and computes what the legacy weight_norm computed, with a copy
    # made by hand (no deepcopy) as the reference.
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, outcome.source.replace(
        "average = copy.deepcopy(encoder)  # COPY",
        "average = nn.Sequential(weight_norm(nn.Conv1d(2, 3, 3), dim=0), nn.Tanh())\n"
        "average.load_state_dict(encoder.state_dict())"), "reference.py")
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(fixed["grads"], reference["grads"]))
    legacy_grads = [p.grad for p in reference["encoder"].parameters()]
    new_grads = [p.grad for p in fixed["encoder"].parameters()]
    by_shape = lambda grads: sorted(grads, key=lambda g: tuple(g.shape))  # bias, g, v: three shapes
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(by_shape(new_grads), by_shape(legacy_grads)))


ALIAS_INTO_THE_BLOCK_INPUT = """
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            out = x  # ALIAS
            out += self.fc(x)  # WRITE
            return out


    torch.manual_seed(0)
    encoder = nn.Linear(4, 4)
    block = Block()
    h = torch.tanh(encoder(torch.randn(2, 4)))
    block(h).sum().backward()
    grads = [p.grad for p in [*encoder.parameters(), *block.parameters()]]
"""


def test_a_write_through_out_equals_x_says_that_out_is_x(tmp_path):
    outcome = run_program(tmp_path, ALIAS_INTO_THE_BLOCK_INPUT)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD101"]
    assert diagnosis.primary.line == outcome.line("WRITE")
    alias = next(loc for loc in diagnosis.related if loc.role == "alias")
    assert alias.line == outcome.line("ALIAS") and "out is x" in alias.note
    assert any(note.startswith("out IS x") and "the input of forward()" in note for note in diagnosis.notes)
    fixed = apply_replacement(outcome.source, diagnosis.help[0].location, diagnosis.help[0].replacement)
    intended = textwrap.dedent(ALIAS_INTO_THE_BLOCK_INPUT).replace("out += self.fc(x)", "out = x + self.fc(x)")
    got, want = run_plain(tmp_path, fixed)["grads"], run_plain(tmp_path, intended, "reference.py")["grads"]
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_an_unrelated_earlier_binding_gives_no_alias_note(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        w = torch.tensor([0.5, -1.0], requires_grad=True)
        x = w.exp()
        out = x.clone()
        y = out * w
        out += 1  # WRITE
        y.sum().backward()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD101"]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert not any(loc.role == "alias" for loc in diagnosis.related)
    assert not any(" IS " in note for note in diagnosis.notes)


PGD_CARRYING_THE_GRAPH = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.rand(3, 4)
    x_adv = x.clone().requires_grad_(True)
    for step in range(3):
        loss = model(x_adv).pow(2).mean()
        model.zero_grad()
        loss.backward()
        x_adv = torch.clamp(x_adv + 0.01 * x_adv.grad.sign(), 0, 1)  # CARRY
"""


def test_a_loop_that_carries_a_clamp_result_with_its_graph_is_named(tmp_path):
    outcome = run_program(tmp_path, PGD_CARRYING_THE_GRAPH)
    assert isinstance(outcome.error, AttributeError)
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD308" and diagnosis.primary.line == outcome.line("CARRY")
    assert "next iteration" in diagnosis.primary.note
    assert diagnosis.help[0].replacement.endswith(".detach().requires_grad_()")
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, diagnosis.help[0].location,
                                                  diagnosis.help[0].replacement))
    model, x = fixed["model"], fixed["x"]
    expected = x.clone()
    for _ in range(3):  # projected gradient steps, written by hand with a fresh leaf each step
        leaf = expected.clone().requires_grad_(True)
        (gradient,) = torch.autograd.grad(model(leaf).pow(2).mean(), leaf)
        expected = torch.clamp(expected + 0.01 * gradient.sign(), 0, 1)
    assert torch.equal(fixed["x_adv"].detach(), expected)
    assert fixed["x_adv"].is_leaf


NO_GRAD_HELPER = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    batch, target = torch.randn(4, 3), torch.randn(4, 2)


    def predict(inputs):
        with torch.no_grad():  # BLOCK
            return net(inputs)


    def validate(inputs):
        return predict(inputs)


    print(validate(batch).detach().sub(target).abs().mean().item())
    output = validate(batch)  # CALL
    loss = (output - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # BACKWARD
    optimizer.step()
    result = [loss.detach(), *[p.detach().clone() for p in net.parameters()]]
"""


def test_a_no_grad_block_in_a_helper_the_training_step_calls_is_the_cut(tmp_path):
    # The backward's own lines cut nothing: the block two calls away does. The run says it was
    # entered; the source says the loss's line reaches it through validate() -> predict().
    outcome = run_program(tmp_path, NO_GRAD_HELPER)
    assert "does not require grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("BLOCK")
    assert "gradients are off in this block of predict()" in diagnosis.primary.note
    related = {loc.role: loc.line for loc in diagnosis.related}
    assert related["called from"] == outcome.line("CALL") and related["backward"] == outcome.line("BACKWARD")
    assert "validate() -> predict()" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement == "return net(inputs)"
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, textwrap.dedent(NO_GRAD_HELPER).replace(
        "    with torch.no_grad():  # BLOCK\n        return net(inputs)", "    return net(inputs)"), "reference.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], reference["result"]))


def test_a_no_grad_helper_whose_result_is_not_what_the_loss_uses_is_not_blamed(tmp_path):
    # predict() ran under no_grad, but the loss is cut by a detach() in the backward's own lines.
    source = NO_GRAD_HELPER.replace("output = validate(batch)  # CALL", "output = net(batch).detach()  # CALL")
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.primary.line == outcome.line("CALL")
    assert diagnosis.extra["cut"] == "detach"


FROZEN_INPUT_CHECKPOINT = """
    import torch
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)


    class Adapted(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(8, 4).requires_grad_(False)
            self.adapter = nn.Linear(4, 4)

        def inner(self, h):
            return torch.tanh(self.adapter(h))

        def forward(self, ids):
            h = self.embed(ids)
            return checkpoint(self.inner, h, use_reentrant=True)  # CHECKPOINT


    model = Adapted()
    ids = torch.tensor([[1, 2, 3]])
    loss = model(ids).pow(2).sum()  # CALL
    loss.backward()  # BACKWARD
    result = [loss.detach(), model.adapter.weight.grad, model.adapter.bias.grad]
"""


def test_a_reentrant_checkpoint_whose_inputs_are_frozen_is_the_cut(tmp_path):
    outcome = run_program(tmp_path, FROZEN_INPUT_CHECKPOINT)
    assert "does not require grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.extra["cut"] == "reentrant_checkpoint"
    assert diagnosis.primary.line == outcome.line("CHECKPOINT")
    related = {loc.role: loc.line for loc in diagnosis.related}
    assert related["called from"] == outcome.line("CALL") and related["backward"] == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "return checkpoint(self.inner, h, use_reentrant=False)"
    fixed = run_plain(tmp_path, apply_help(outcome))
    # The reference makes the checkpoint's input require grad (what enable_input_require_grads does).
    reference = run_plain(tmp_path, textwrap.dedent(FROZEN_INPUT_CHECKPOINT).replace(
        "h = self.embed(ids)", "h = self.embed(ids).requires_grad_()"), "reference.py")
    assert all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(fixed["result"], reference["result"]))
    assert fixed["result"][1].abs().sum() > 0


def test_a_non_reentrant_checkpoint_is_not_blamed(tmp_path):
    source = FROZEN_INPUT_CHECKPOINT.replace("use_reentrant=True", "use_reentrant=False").replace(
        "return torch.tanh(self.adapter(h))", "return torch.tanh(self.adapter(h)).detach()")
    outcome = run_program(tmp_path, source)
    for diagnosis in outcome.diagnoses:
        assert diagnosis.extra.get("cut") != "reentrant_checkpoint"


def test_a_no_grad_block_of_several_lines_in_a_helper_is_named_but_not_rewritten(tmp_path):
    # The block also computes a target that may be meant to stay unrecorded: only the user can say
    # which lines leave it, so the help is advice.
    source = textwrap.dedent(NO_GRAD_HELPER).replace(
        "    with torch.no_grad():  # BLOCK\n        return net(inputs)",
        "    with torch.no_grad():  # BLOCK\n        reference = inputs.mean()\n        return net(inputs) - reference")
    assert "reference = inputs.mean()" in source
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.primary.line == outcome.line("BLOCK")
    assert diagnosis.help[0].replacement is None
    assert diagnosis.help[0].message.startswith("run predict() with gradients on when the training step calls it")


def test_a_no_grad_block_of_another_program_with_a_function_of_the_same_name_is_not_the_cut(tmp_path):
    # The process first runs a program whose predict() has a no_grad block (recorded), then one
    # whose own predict() is decorated with @torch.no_grad(): the second program's report must
    # name its decorator (AD307), not the first program's block in another file.
    first = tmp_path / "first"
    first.mkdir()
    run_program(first, textwrap.dedent(NO_GRAD_HELPER))
    second = tmp_path / "second"
    second.mkdir()
    outcome = run_program(second, textwrap.dedent("""\
        import torch
        from torch import nn

        net = nn.Linear(3, 1)


        @torch.no_grad()  # DECORATOR
        def predict(inputs):
            return net(inputs)


        loss = predict(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        """))
    files = {location.file for diagnosis in outcome.diagnoses for location in [diagnosis.primary, *diagnosis.related]
             if location is not None}
    assert all(str(second) in name for name in files), files
    assert any(d.code == "AD307" and d.primary.line == outcome.line("DECORATOR") for d in outcome.diagnoses)


def test_a_switch_of_an_earlier_program_turned_back_on_between_sessions_is_not_blamed(tmp_path):
    # The first program leaves gradients off with set_grad_enabled(False); code the doctor does not
    # watch (run_program's cleanup, as a test fixture would) turns them on again. The second
    # program's no_grad block is the cut: its report must not name the first program's switch.
    first = tmp_path / "first"
    first.mkdir()
    run_program(first, "import torch\ntorch.set_grad_enabled(False)\nw = torch.ones(2, requires_grad=True)\n"
                       "(w * 2).sum().backward()\n")
    second = tmp_path / "second"
    second.mkdir()
    outcome = run_program(second, textwrap.dedent("""\
        import torch

        w = torch.ones(2, requires_grad=True)
        with torch.no_grad():  # BLOCK
            loss = (w * 2).sum()
            loss.backward()
        """))
    assert outcome.error is not None
    files = {location.file for diagnosis in outcome.diagnoses for location in [diagnosis.primary, *diagnosis.related]
             if location is not None}
    assert files and all(str(second) in name for name in files), files
