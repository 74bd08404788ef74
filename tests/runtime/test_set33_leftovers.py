"""Sets 29-33's leftovers (docs/bug-reports.md, "Sets 29-33: leftovers worked on").

AD214 names the user's `detach()` that cut the optimizer's parameters off every loss (set 29's
flow_matching: `return ut.detach(), div.detach()` inside ODE dynamics). The programs here are other
shapes of that cause, written before the change was run on them: a projector whose embedding is
detached in a helper before a prototype loss trains only the prototypes, and an Euler rollout whose
dynamics detach the network's output while the loss still has a graph through the initial state.
Near-twins: the same programs without the detach (they train: silent), a detach for logging next to
a loss that trains (silent), and two detach lines that both reach the parameters (AD214 stays at
step(): which one to drop is not known).
"""

import os
import runpy
import sys
import textwrap
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import run_plain, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnoses_of(tmp_path, source, name="program"):
    path = write(tmp_path, textwrap.dedent(source), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            runpy.run_path(path, run_name="__main__")
    return doctor.diagnoses


def result_of(tmp_path, source, name):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), name))
    assert error is None, error
    return namespace["result"]


def line_of(source, marker):
    return next(i for i, text in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in text)


PROTOTYPES = """
import torch
import torch.nn as nn
torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
prototypes = nn.Parameter(torch.randn(3, 8))
enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
proto_opt = torch.optim.SGD([prototypes], lr=0.1)


def embed(batch):
    z = encoder(batch)
    return nn.functional.normalize(z, dim=-1).detach()  # CUT


for it in range(4):
    x = torch.randn(10, 6)
    scores = embed(x) @ prototypes.t()
    loss = -torch.log_softmax(scores, -1).max(-1).values.mean()
    enc_opt.zero_grad()
    proto_opt.zero_grad()
    loss.backward()
    enc_opt.step()
    proto_opt.step()
result = [p.detach().clone() for p in encoder.parameters()] + [prototypes.detach().clone()]
"""
PROTOTYPES_TRAINED = PROTOTYPES.replace(".detach()  # CUT", "  # CUT")

ROLLOUT = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 2))

    def step(self, state, dt):
        change = self.f(state)
        return state + dt * change.detach()  # CUT


model = Dynamics()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
target = torch.tensor([1.0, -1.0])
for epoch in range(3):
    x0 = torch.randn(5, 2, requires_grad=True)
    state = x0
    for k in range(4):
        state = model.step(state, 0.25)
    loss = ((state - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
"""
ROLLOUT_TRAINED = ROLLOUT.replace("dt * change.detach()  # CUT", "dt * change  # CUT")

LOGGED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
history = []
for it in range(3):
    out = net(torch.randn(8, 4))
    history.append(out.detach())
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in net.parameters()]
"""

TWO_CUTS = ROLLOUT.replace("        change = self.f(state)\n",
                            "        change = self.f(state)\n        shown.append(change.detach())  # FIRST\n").replace(
    "model = Dynamics()", "shown = []\nmodel = Dynamics()").replace("# CUT", "# SECOND")


def test_prototype_embedding_detached_in_a_helper_is_named(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, PROTOTYPES) if d.code == "AD214"]
    assert found, "AD214 expected"
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(PROTOTYPES, "# CUT")
    assert "detach()" in diagnosis.help[0].message
    assert diagnosis.help[0].replacement is None  # advice: nothing raised, no oracle re-runs it


def test_rollout_dynamics_detached_output_is_named(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, ROLLOUT) if d.code == "AD214"]
    assert found, "AD214 expected"
    assert found[0].primary.line == line_of(ROLLOUT, "# CUT")


def test_without_the_detach_the_parameters_train_and_nothing_is_reported(tmp_path):
    for source, name in ((PROTOTYPES_TRAINED, "protos"), (ROLLOUT_TRAINED, "rollout")):
        assert not diagnoses_of(tmp_path, source, name)
        before = result_of(tmp_path, source.replace("range(4)", "range(0)").replace("range(3)", "range(0)"),
                           name + "_untrained")
        after = result_of(tmp_path, source, name + "_trained")
        # the advice applied trains the module the detach had cut off
        assert any(not torch.equal(a, b) for a, b in zip(before, after))


def test_a_detach_for_logging_next_to_a_training_loss_stays_silent(tmp_path):
    assert not diagnoses_of(tmp_path, LOGGED)


def test_two_detach_lines_reaching_the_parameters_leave_ad214_at_step(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, TWO_CUTS) if d.code == "AD214"]
    assert found
    assert found[0].primary.line not in (line_of(TWO_CUTS, "# FIRST"), line_of(TWO_CUTS, "# SECOND"))


# AD109: the result of an `@torch.inference_mode()` function is saved for backward later. The change
# goes at the one user line that received the result (set 33's minimind: `output_ids =
# model.generate(...)`, the maintainers cloned there). Shapes written before the change was run on
# them: a module-level encoder function whose features feed a trained head, and a sampler method
# whose samples are scored by a critic that trains.

ENCODED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
backbone = nn.Linear(5, 7)
head = nn.Linear(7, 2)
opt = torch.optim.SGD(head.parameters(), lr=0.1)


@torch.inference_mode()
def encode(net, batch):
    return torch.relu(net(batch))


losses = []
for it in range(3):
    x = torch.randn(6, 5)
    feats = encode(backbone, x)  # CALL
    loss = head(feats).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "head": [p.detach().clone() for p in head.parameters()]}
"""
ENCODED_FIXED = ENCODED.replace("feats = encode(backbone, x)  # CALL", "feats = encode(backbone, x).clone()  # CALL")

SAMPLED = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(3, 4)

    @torch.inference_mode()
    def sample(self, noise):
        return self.mu(noise) + 0.1 * torch.randn(noise.shape[0], 4)


sampler = Sampler()
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
for it in range(3):
    with torch.no_grad():
        fakes = sampler.sample(torch.randn(5, 3))  # CALL
    score = critic(fakes).mean()
    opt.zero_grad()
    score.backward()
    opt.step()
result = [p.detach().clone() for p in critic.parameters()]
"""
SAMPLED_FIXED = SAMPLED.replace("sampler.sample(torch.randn(5, 3))  # CALL", "sampler.sample(torch.randn(5, 3)).clone()  # CALL")

# Near-twins: two call sites (which result failed is not known), a tuple target: the decorator stays first.
TWO_SITES = ENCODED.replace("    x = torch.randn(6, 5)\n",
                            "    x = torch.randn(6, 5)\n    shown = encode(backbone, x[:1])\n")
PAIR = ENCODED.replace("return torch.relu(net(batch))", "return torch.relu(net(batch)), batch").replace(
    "feats = encode(backbone, x)  # CALL", "feats, _ = encode(backbone, x)  # CALL")


def _ad109(tmp_path, source, name):
    from catalogue import run_watched

    error = run_watched(write(tmp_path, textwrap.dedent(source), name))
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD109"]
    return found


def test_inference_result_copied_at_the_call_site(tmp_path):
    from catalogue import apply_suggestion

    for source, fixed, name in ((ENCODED, ENCODED_FIXED, "encoded"), (SAMPLED, SAMPLED_FIXED, "sampled")):
        found = _ad109(tmp_path, source, name)
        assert found.primary.line == line_of(source, "# CALL")
        change = found.help[0]
        assert change.replacement is not None and ".clone()" in change.replacement
        assert any("no_grad()" in (h.replacement or "") for h in found.help[1:])  # the decorator's change stays
        applied = apply_suggestion(textwrap.dedent(source), change)
        want = result_of(tmp_path, fixed, name + "_answer")
        got = result_of(tmp_path, applied, name + "_applied")
        flat_want = want["head"] + [want["losses"]] if isinstance(want, dict) else want
        flat_got = got["head"] + [got["losses"]] if isinstance(got, dict) else got
        assert all(torch.equal(a, b) for a, b in zip(flat_want, flat_got))
        assert not diagnoses_of(tmp_path, fixed, name + "_silent")


def test_two_call_sites_or_a_tuple_result_keep_the_decorator_first(tmp_path):
    for source, name in ((TWO_SITES, "two_sites"), (PAIR, "pair")):
        found = _ad109(tmp_path, source, name)
        assert found.primary.line == line_of(source, "@torch.inference_mode()")
        assert all(".clone()" not in (h.replacement or "") for h in found.help)


# The meaning check for AD103's "compute the forward again after step()" help where the oracle run
# succeeds (set 33's style-transformer): the oracle's failing backward() goes through the values
# saved before the step, the help through the updated weights. Unverified (offered) only when the
# first differing call is made at the line that raised and every call before it is equal.

def _run(values_and_lines):
    return {"events": [("backward", [torch.tensor(v)]) for v, _ in values_and_lines],
            "sites": [("<module>", line) for _, line in values_and_lines], "error": None}


def test_recomputed_forward_differs_first_at_the_line_that_raised_is_unverified():
    from autograd_doctor.cli.meaning import judge

    original = _run([(1.0, 80), (2.0, 92), (3.0, 80), (4.0, 92)])
    changed = _run([(1.0, 81), (2.5, 95), (3.1, 81), (4.2, 95)])
    verdict = judge(original, changed, True, recomputes_failing_forward=True, failing_line=92)
    assert verdict.status == "unverified" and "line 92, the one that raised" in verdict.reason


def test_recomputed_forward_that_changes_an_earlier_call_is_still_rejected():
    from autograd_doctor.cli.meaning import judge

    original = _run([(1.0, 80), (2.0, 92)])
    earlier = _run([(1.5, 80), (2.0, 92)])  # the first loss changed: another meaning
    assert judge(original, earlier, True, recomputes_failing_forward=True, failing_line=92).status == "rejected"
    fewer = _run([(1.0, 80)])  # the failing call dropped
    assert judge(original, fewer, True, recomputes_failing_forward=True, failing_line=92).status == "rejected"
    # without the flag (a help that keeps every value), the same change is rejected as before
    changed = _run([(1.0, 80), (2.5, 92)])
    assert judge(original, changed, True, failing_line=92).status == "rejected"
