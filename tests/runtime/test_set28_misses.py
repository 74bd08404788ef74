"""Causes that sets 27 and 28 left (docs/bug-reports.md, "Sets 27 and 28: misses worked on"), each on
programs of their own, in other shapes than the sets' cases: the diagnosis names the line to change,
its help applied makes the program compute what a hand-written version computes, and correct
near-twins run silent.

- AD301, a graph cut several calls below the line that lost it, inside the user's own functions
  (set 27's Sinkhorn divergence through a backend's `to_numpy`, PythonOT/POT#393; set 28's torchMoji
  forward that returns `outputs.data`, huggingface/torchMoji#21): analysis/nested_cuts.py.
"""

from __future__ import annotations

import runpy
import textwrap

import torch

import autograd_doctor
from autograd_doctor.analysis.fixes import apply_replacement


def run_watched(tmp_path, source: str, name: str = "program"):
    """(program path, exception, its diagnoses) of the program run under watch()."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    try:
        with autograd_doctor.watch():
            runpy.run_path(str(path), run_name="__main__")
    except Exception as error:  # the program's own failure is what we study
        return path, error, autograd_doctor.diagnoses_of(error)
    raise AssertionError("the program did not fail")


def run_source(tmp_path, source: str, name: str) -> dict:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return runpy.run_path(str(path), run_name="__main__")


def close(a, b):
    return len(a) == len(b) and all(torch.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(a, b))


# ---- AD301: a round trip through NumPy two calls down ------------------------------------------

# An MMD loss whose kernel matrix is computed on NumPy copies by a converter object, and brought
# back with torch.as_tensor: the loss has no graph.
MMD = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Converter:
        def to_np(self, t):
            return t.detach().cpu().numpy()


    conv = Converter()


    def pairwise(a, b):
        return ((a[:, None] - b[None]) ** 2).sum(-1)


    def kernel_mean(x, y, bandwidth):
        {kernel}
        return torch.exp(-K / bandwidth).mean()


    def mmd(x, y):
        return kernel_mean(x, x, 1.0) + kernel_mean(y, y, 1.0) - 2 * kernel_mean(x, y, 1.0)


    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    target = torch.randn(16, 2) + 1.0
    losses = []
    for step in range(5):
        out = model(torch.randn(16, 3))
        loss = mmd(out, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in model.parameters()]
"""

MMD_BUGGY = MMD.replace("{kernel}", "K = pairwise(conv.to_np(x), conv.to_np(y))\n        K = torch.as_tensor(K)")
MMD_CORRECT = MMD.replace("{kernel}", "K = pairwise(x, y)")


def test_round_trip_two_calls_down_is_named_and_dropped(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, MMD_BUGGY)
    assert "does not require grad" in str(error)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == 21  # K = pairwise(conv.to_np(x), conv.to_np(y))
    assert any(r.role == "call" and r.line == 36 for r in diagnosis.related)  # loss = mmd(out, target)
    help = diagnosis.help[0]
    assert help.replacement == "K = pairwise(x, y)"
    assert (help.location.line, help.location.end_line) == (21, 22)
    fixed = apply_replacement(path.read_text(), help.location, help.replacement)
    assert close(run_source(tmp_path, fixed, "fixed")["result"],
                 run_source(tmp_path, textwrap.dedent(MMD_CORRECT), "correct")["result"])


def test_round_trip_on_a_value_that_does_not_reach_the_loss_is_not_named(tmp_path):
    """A converter used for logging in the same function, while the graph is cut elsewhere (a
    value made with torch.tensor from a list): the logging line is not the cut."""
    source = MMD.replace("{kernel}", "logged = conv.to_np(x)\n        "
                                     "K = torch.tensor(pairwise(x, y).tolist())")
    _, _, diagnoses = run_watched(tmp_path, source)
    assert diagnoses and diagnoses[0].code == "AD301"
    assert diagnoses[0].primary.line != 21
    assert not any(h.replacement and "logged" in h.replacement for h in diagnoses[0].help)


def test_correct_mmd_is_silent(tmp_path):
    path = tmp_path / "correct.py"
    path.write_text(textwrap.dedent(MMD_CORRECT))
    with autograd_doctor.watch() as doctor:
        runpy.run_path(str(path), run_name="__main__")
    assert doctor.diagnoses == []


# ---- AD301: a detach() two calls down, in a helper of a helper ------------------------------------

EMBED = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    def normalize(v):
        n = v.norm(dim=1, keepdim=True)
        v = v / n
        {cut}
        return v


    def embed(model, x):
        return normalize(model(x))


    model = nn.Linear(5, 4)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(4):
        x, target = torch.randn(6, 5), torch.randn(6, 4)
        emb = embed(model, x)
        loss = ((emb - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in model.parameters()]
"""


def test_detach_two_calls_down_is_named_and_removed(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, EMBED.replace("{cut}", "v = v.detach()"))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == 11  # v = v.detach()
    help = next(h for h in diagnosis.help if h.replacement)
    fixed = apply_replacement(path.read_text(), help.location, help.replacement)
    correct = textwrap.dedent(EMBED.replace("{cut}", "pass"))
    assert close(run_source(tmp_path, fixed, "fixed")["result"], run_source(tmp_path, correct, "correct")["result"])


def test_detach_of_a_value_that_does_not_reach_the_return_is_not_named(tmp_path):
    """`stats = v.detach()` kept for logging, the cut elsewhere (a torch.no_grad() block in the
    caller): not named as the cut."""
    source = EMBED.replace("{cut}", "stats = v.detach()").replace(
        "emb = embed(model, x)", "with torch.no_grad():\n            emb = embed(model, x)")
    _, _, diagnoses = run_watched(tmp_path, source)
    assert diagnoses and diagnoses[0].code == "AD301"
    assert diagnoses[0].primary.line != 11


# ---- AD301: `.data` on a module's output inside its own forward ------------------------------------

POLICY = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 3)

        def forward(self, h):
            scores = self.fc(h)
            {cut}
            return F.log_softmax(scores, dim=-1)


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 6)
            self.head = Head()

        def forward(self, obs):
            return self.head(torch.relu(self.body(obs)))


    policy = Policy()
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
    losses = []
    for step in range(4):
        obs, actions, advantages = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8)
        log_probs = policy(obs)
        loss = -(log_probs.gather(1, actions[:, None]).squeeze(1) * advantages).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in policy.parameters()]
"""


def test_data_in_a_submodule_forward_is_named_and_removed(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, POLICY.replace("{cut}", "scores = scores.data"))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == 16  # scores = scores.data
    help = next(h for h in diagnosis.help if h.replacement)
    fixed = apply_replacement(path.read_text(), help.location, help.replacement)
    correct = textwrap.dedent(POLICY.replace("{cut}", "pass"))
    assert close(run_source(tmp_path, fixed, "fixed")["result"], run_source(tmp_path, correct, "correct")["result"])


def test_correct_policy_is_silent(tmp_path):
    path = tmp_path / "correct.py"
    path.write_text(textwrap.dedent(POLICY.replace("{cut}", "pass")))
    with autograd_doctor.watch() as doctor:
        runpy.run_path(str(path), run_name="__main__")
    assert doctor.diagnoses == []


# ---- AD214: a loss re-wrapped as a new leaf, its graph cut upstream two calls down ------------------

REWRAPPED = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    def features(model, x):
        h = model(x)
        {cut}
        return torch.tanh(h)


    def predict(model, x):
        return features(model, x).sum(dim=1)


    model = nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(4):
        x, y = torch.randn(5, 4), torch.randn(5)
        loss = F.mse_loss(predict(model, x), y)
        {wrap}
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in model.parameters()]
"""


def test_rewrapped_loss_names_the_cut_upstream(tmp_path):
    import warnings

    source = REWRAPPED.replace("{cut}", "h = h.detach()").replace(
        "{wrap}", "loss = torch.autograd.Variable(loss, requires_grad=True)")
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            runpy.run_path(str(path), run_name="__main__")
    diagnosis = next(d for d in doctor.diagnoses if d.code == "AD214")
    assert diagnosis.primary.line == 25  # the wrap
    assert any(r.role == "cut" and r.line == 11 for r in diagnosis.related)  # h = h.detach()
    assert "line 11" in diagnosis.help[0].message


def test_rewrapped_loss_of_a_number_names_no_upstream_cut(tmp_path):
    """The wrapped value is a float computed in Python: nothing upstream to name."""
    import warnings

    source = REWRAPPED.replace("{cut}", "pass").replace(
        "loss = F.mse_loss(predict(model, x), y)", "loss = float(F.mse_loss(predict(model, x), y))").replace(
        "{wrap}", "loss = torch.tensor(loss, requires_grad=True)")
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            runpy.run_path(str(path), run_name="__main__")
    diagnosis = next(d for d in doctor.diagnoses if d.code == "AD214")
    assert not any(r.role == "cut" for r in diagnosis.related)


def test_correct_rewrapped_twin_is_silent(tmp_path):
    path = tmp_path / "correct.py"
    path.write_text(textwrap.dedent(REWRAPPED.replace("{cut}", "pass").replace("{wrap}", "pass")))
    with autograd_doctor.watch() as doctor:
        runpy.run_path(str(path), run_name="__main__")
    assert doctor.diagnoses == []


# ---- AD101: a function keeps its caller's tensor as its own, then writes into it ---------------------

POINTS = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Points:
        def __init__(self, points):
            points = points.to(torch.float32)
            {keep}

        def centred(self):
            self.points -= self.points.mean(dim=0, keepdim=True)
            return self.points


    model = nn.Linear(3, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        scale = torch.exp(model(torch.randn(5, 3)))
        loss = scale.sum() + Points(scale).centred().pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in model.parameters()]
"""

SHIFT = """
    import torch

    torch.manual_seed(0)


    def shifted(boxes, offset):
        b = {bind}
        b[:, :2] += offset
        return b


    w = torch.randn(4, 4, requires_grad=True)
    out = torch.sigmoid(torch.randn(6, 4) @ w)
    loss = out.sum() + shifted(out, 0.5).pow(2).sum()
    loss.backward()
    result = [loss.detach(), w.grad]
"""


def test_caller_tensor_kept_through_to_is_named_and_copied(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, POINTS.replace("{keep}", "self.points = points"))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == 11  # self.points = points
    help = diagnosis.help[0]
    assert help.replacement == "self.points = points.clone()"
    fixed = apply_replacement(path.read_text(), help.location, help.replacement)
    correct = textwrap.dedent(POINTS.replace("{keep}", "self.points = points.clone()"))
    assert close(run_source(tmp_path, fixed, "fixed")["result"], run_source(tmp_path, correct, "correct")["result"])


def test_caller_tensor_kept_through_as_tensor_in_a_function_is_named(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, SHIFT.replace("{bind}", "torch.as_tensor(boxes)"))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == 8  # b = torch.as_tensor(boxes)
    help = diagnosis.help[0]
    fixed = apply_replacement(path.read_text(), help.location, help.replacement)
    correct = textwrap.dedent(SHIFT.replace("{bind}", "boxes.clone()"))
    assert close(run_source(tmp_path, fixed, "fixed")["result"], run_source(tmp_path, correct, "correct")["result"])


def test_function_with_its_own_copy_is_silent(tmp_path):
    for bind in ("boxes * 1.0", "torch.as_tensor(boxes.tolist())"):
        path = tmp_path / "correct.py"
        path.write_text(textwrap.dedent(SHIFT.replace("{bind}", bind)))
        with autograd_doctor.watch() as doctor:
            runpy.run_path(str(path), run_name="__main__")
        assert doctor.diagnoses == []
