"""AD301 (gradient path cut) and AD302 (backward through a freed graph) on real programs."""

import pytest
import torch

from helpers import apply_help, run_plain, run_program

from autograd_doctor.analysis.gradient_path import why_no_grad

HEADER = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x = torch.randn(8, 4)
    y = torch.randn(8, 1)
"""


def _cut(outcome, code="AD301"):
    found = [d for d in outcome.diagnoses if d.code == code]
    assert found, (outcome.error, outcome.diagnoses)
    return found[0]


def test_detach_on_the_loss_path_is_the_primary_line_and_the_fix_works(tmp_path):
    source = HEADER + """
    out = model(x)
    pred = out.detach()  # CUT
    loss = ((pred - y) ** 2).mean()
    loss.backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    assert "does not require grad" in str(outcome.error)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.extra["cut"] == "detach"
    assert {loc.role: loc.line for loc in diagnosis.related}["backward"] == outcome.line("BACKWARD")
    assert diagnosis.help[0].replacement == "pred = out"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["model"].weight.grad is not None


def test_no_grad_block_is_named_with_the_with_line(tmp_path):
    source = HEADER + """
    with torch.no_grad():  # WITH
        out = model(x)  # CUT
    loss = ((out - y) ** 2).mean()
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.extra["cut"] == "no_grad"
    assert {loc.role: loc.line for loc in diagnosis.related}["no_grad"] == outcome.line("WITH")


def test_torch_tensor_of_losses_suggests_stack_and_the_fix_works(tmp_path):
    source = HEADER + """
    l1 = ((model(x) - y) ** 2).mean()
    l2 = model(x).abs().mean()
    total = torch.tensor([l1, l2]).sum()  # CUT
    total.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.help[0].replacement == "total = torch.stack([l1, l2]).sum()"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["model"].weight.grad is not None


def test_numpy_round_trip_is_found(tmp_path):
    source = HEADER + """
    out = model(x)
    arr = out.detach().numpy()
    back = torch.from_numpy(arr)  # CUT
    loss = back.pow(2).mean()
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    # `back` is where the values re-enter torch; the detach() on the line before is the first cut.
    assert diagnosis.primary.line in (outcome.line("CUT"), outcome.line("CUT") - 1)


def test_argmax_is_found(tmp_path):
    source = HEADER + """
    logits = model(x)
    label = logits.argmax(dim=1)  # CUT
    loss = (label.float() - y.squeeze(1)).pow(2).mean()
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.extra["cut"] == "integer"


def test_data_cut_inside_a_helper_function(tmp_path):
    source = HEADER + """
    def predict(inputs):
        out = model(inputs)
        return out

    def step():
        pred = predict(x).data  # CUT
        loss = (pred - y).pow(2).mean()
        loss.backward()

    step()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.help[0].replacement == "pred = predict(x)"


def test_all_parameters_frozen_points_at_the_freezing_line(tmp_path):
    source = HEADER + """
    model.requires_grad_(False)  # CUT
    loss = model(x).pow(2).mean()
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome)
    assert diagnosis.primary.line == outcome.line("CUT")


def test_rnn_hidden_state_carried_across_iterations(tmp_path):
    source = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    cell = nn.Linear(8, 4)
    h = torch.zeros(1, 4)
    for step in range(3):
        x = torch.randn(1, 4)
        h = torch.tanh(cell(torch.cat([x, h], dim=1)))  # CARRY
        loss = h.pow(2).sum()
        loss.backward()  # BACKWARD
    """
    outcome = run_program(tmp_path, source)
    assert "second time" in str(outcome.error)
    diagnosis = _cut(outcome, "AD302")
    assert diagnosis.primary.line == outcome.line("CARRY")
    assert diagnosis.extra["carrier"] == "h"
    assert diagnosis.tensor.name == "h"
    assert diagnosis.help[0].replacement == "loss.backward()\nh = h.detach()"
    assert diagnosis.help[1].replacement == "loss.backward(retain_graph=True)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["step"] == 2


def test_two_losses_sharing_a_graph_name_the_first_backward(tmp_path):
    source = HEADER + """
    hidden = torch.sigmoid(model(x))
    loss_a = hidden.mean()
    loss_b = hidden.pow(2).mean()
    loss_a.backward()  # FIRST
    loss_b.backward()  # SECOND
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome, "AD302")
    assert diagnosis.extra["freed_by_line"] == outcome.line("FIRST")
    # The first help changes the earlier backward() (the two losses summed there), so that call is
    # the line to change: the primary location; the tensor that carries the graph is related.
    assert diagnosis.help[0].location.line == outcome.line("FIRST")
    assert (diagnosis.primary.role, diagnosis.primary.line) == ("freed", outcome.line("FIRST"))
    assert "hidden" in [loc.source.split(" =")[0].strip() for loc in diagnosis.related]
    retain = [h for h in diagnosis.help if h.replacement == "loss_a.backward(retain_graph=True)"]
    assert retain
    fixed = outcome.source.replace("loss_a.backward()  # FIRST", "loss_a.backward(retain_graph=True)")
    run_plain(tmp_path, fixed)


def test_same_loss_backward_twice(tmp_path):
    source = HEADER + """
    loss = torch.sigmoid(model(x)).mean()
    loss.backward()  # FIRST
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = _cut(outcome, "AD302")
    # No step() and no clear between the two calls, the gradients still there: the second call
    # would only add the same gradients again (retain_graph=True would double them), so the help
    # deletes it (tests/runtime/test_same_loss_backpropagated_twice.py applies it).
    assert diagnosis.help[0].message.startswith("delete this second loss.backward()")
    assert diagnosis.help[0].location.line == outcome.line("FIRST")
    assert all("retain_graph=True" not in (h.replacement or "") for h in diagnosis.help)


def test_parameter_cut_by_detach_warns_after_backward(tmp_path):
    source = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))
    x = torch.randn(8, 4)
    feat = model[0](x)
    out = model[1](feat.detach())  # CUT
    loss = out.pow(2).mean()
    loss.backward()
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    assert len(outcome.warnings) == 1
    diagnosis = _cut(outcome)
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.extra["parameters"] == ["model.0.weight", "model.0.bias"]
    assert diagnosis.help[0].replacement == "out = model[1](feat)"


def test_parameter_cut_in_training_loop_found_by_module_tracking(tmp_path):
    source = """
    import torch
    from torch import nn
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(4, 8)
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            return self.head(self.enc(x).detach())

    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        loss = net(torch.randn(8, 4)).pow(2).mean()
        loss.backward()  # BACKWARD
        opt.step()
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    found = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert len(found) == 1
    assert found[0].extra["parameters"] == ["net.enc.weight", "net.enc.bias"]


def test_silent_raise_turns_the_warning_into_an_error(tmp_path):
    source = """
    import torch
    from torch import nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))
    feat = model[0](torch.randn(2, 4))
    out = model[1](feat.detach())
    out.sum().backward()
    """
    outcome = run_program(tmp_path, source, silent="raise")
    assert type(outcome.error).__name__ == "AutogradDoctorError"


def test_why_no_grad_names_the_cut_line():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
    feat = model[0](torch.randn(2, 3))
    frozen = feat.detach()
    loss = model[1](frozen).sum()
    report = why_no_grad(model[0].weight, loss)
    assert not report.reaches
    assert report.diagnosis.code == "AD301"
    assert report.diagnosis.primary.source == "frozen = feat.detach()"
    assert "frozen = feat" in str(report)
    assert report.to_dict()["reaches"] is False


def test_why_no_grad_when_the_path_exists():
    w = torch.ones(2, requires_grad=True)
    report = why_no_grad(w, (w * 2).sum())
    assert report.reaches and report.path == ["SumBackward0", "MulBackward0", "AccumulateGrad"]


def test_why_no_grad_frozen_and_non_leaf():
    w = torch.ones(2)
    assert "does not require grad" in why_no_grad(w, torch.ones(1, requires_grad=True).sum()).reason
    x = torch.ones(2, requires_grad=True)
    mid = x * 2
    report = why_no_grad(mid, mid.sum())
    assert report.reaches and "retain_grad" in report.notes[0]


def test_why_no_grad_when_the_loss_has_no_grad_fn():
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        out = model(torch.randn(2, 3))
    loss = out.sum()
    report = why_no_grad(model.weight, loss)
    assert "no grad_fn" in report.reason
    assert report.diagnosis.primary.source == "out = model(torch.randn(2, 3))"


def test_tensor_made_before_the_loop_carries_a_freed_graph(tmp_path):
    """PPO-style: old log-probabilities computed with a graph, reused by every epoch."""
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
        states, actions, advantages = torch.randn(32, 4), torch.randint(0, 2, (32,)), torch.randn(32)
        old_log_probs = torch.log_softmax(policy(states), -1).gather(1, actions[:, None]).squeeze(1)  # CARRY
        for epoch in range(3):
            log_probs = torch.log_softmax(policy(states), -1).gather(1, actions[:, None]).squeeze(1)
            loss = -(torch.exp(log_probs - old_log_probs) * advantages).mean()
            opt.zero_grad()
            loss.backward()  # BACKWARD
            opt.step()
    """
    outcome = run_program(tmp_path, source)
    assert "second time" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("CARRY")
    assert diagnosis.tensor.name == "old_log_probs"
    assert diagnosis.help[0].replacement.endswith(".squeeze(1).detach()")
    run_plain(tmp_path, apply_help(outcome))


def test_an_earlier_programs_no_grad_forward_is_not_the_cut(tmp_path):
    """The no_grad blocks entered are remembered across sessions (a notebook's cells); a module
    called in the loss's statement runs its own class's forward, not any earlier program's
    function named forward (a pytest session ran such a program just before)."""
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    run_program(earlier, HEADER + """
    class Smoothed(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(4, 1)

        def forward(self, x):
            with torch.no_grad():
                scale = x.abs().mean()
            return self.inner(x) / (1 + scale)

    Smoothed()(x).pow(2).mean().backward()
    """)
    later = tmp_path / "later"
    later.mkdir()
    outcome = run_program(later, HEADER + """
    model.requires_grad_(False)  # CUT
    loss = model(x).pow(2).mean()
    loss.backward()
    """)
    assert _cut(outcome).primary.line == outcome.line("CUT")
