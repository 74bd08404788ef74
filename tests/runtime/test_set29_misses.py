"""Set 29's misses (docs/bug-reports.md, "Set 29, measured once, then its causes").

AD307 when backward() runs inside a function that is itself decorated with a grad-off decorator:
set 29's replicate/cog#1681 (`@torch.inference_mode()` on a `predict()` that fits a head and calls
`loss.backward()`) was a generic AD301 at the loss, whose help blamed "the function called here".
The programs here are other shapes of that cause, written before the change was run on them: a
calibration object's `@torch.no_grad()` `fit()` method, and a serving function decorated with
`@torch.inference_mode()` that calls a helper which backpropagates (the decorator is a caller's,
two frames out). The near-twins: the same programs with the decorator only on the function that
predicts (they run, and the doctor stays silent), and a `@torch.no_grad()` caller, which stays
grad_off_caller's AD301 (its `@torch.enable_grad()` help keeps the caller's mode)."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_as_script, run_plain

TEMPERATURE_FIT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class TemperatureScaler:
    def __init__(self):
        self.log_t = torch.zeros(1, requires_grad=True)

    @torch.no_grad()  # DECORATOR
    def fit(self, logits, labels, steps=20):
        optimizer = torch.optim.SGD([self.log_t], lr=0.1)
        history = []
        for _ in range(steps):
            optimizer.zero_grad()
            nll = F.cross_entropy(logits / self.log_t.exp(), labels)
            nll.backward()  # BACKWARD
            optimizer.step()
            history.append(nll.item())
        return history

    def predict(self, logits):
        return torch.softmax(logits / self.log_t.exp(), dim=-1).detach()


classifier = nn.Linear(4, 3)
x = torch.randn(40, 4)
labels = torch.randint(0, 3, (40,))
with torch.no_grad():
    logits = classifier(x)
scaler = TemperatureScaler()
history = scaler.fit(logits, labels)
result = {"history": torch.tensor(history), "log_t": scaler.log_t.detach().clone(), "probs": scaler.predict(logits)}
"""
TEMPERATURE_ANSWER = TEMPERATURE_FIT.replace("    @torch.no_grad()  # DECORATOR\n", "")

SERVE = """
import torch
import torch.nn as nn
torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(6, 12), nn.Tanh())
encoder.requires_grad_(False)


def adapt(features, targets, steps=10):
    w = torch.zeros(12, 1, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=0.05)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((features @ w).squeeze(-1) - targets).pow(2).mean()
        loss.backward()  # BACKWARD
        optimizer.step()
    return w.detach().clone()


@torch.inference_mode()  # DECORATOR
def serve(request):
    features = encoder(request["x"]).clone()
    w = adapt(features, request["y"])
    return {"w": w, "pred": (encoder(request["query"]) @ w).clone()}


request = {"x": torch.randn(16, 6), "y": torch.randn(16), "query": torch.randn(3, 6)}
result = serve(request)
"""
SERVE_ANSWER = SERVE.replace("@torch.inference_mode()  # DECORATOR\n", "")

# The correct near-twins: the decorator stays on the code that only predicts.
SERVE_TWIN = SERVE_ANSWER.replace("def serve(request):", "def serve(request):\n    return _serve(request)\n\n\ndef _serve(request):").replace(
    "request = {", "@torch.inference_mode()\ndef predict(x, w):\n    return (encoder(x) @ w).clone()\n\n\nrequest = {") \
    + "result['again'] = predict(request['query'], result['w'])\n"
TEMPERATURE_TWIN = TEMPERATURE_ANSWER.replace("    def predict(self, logits):", "    @torch.no_grad()\n    def predict(self, logits):")

# A @torch.no_grad() caller: grad_off_caller's AD301 (enable_grad on the function), not this check.
SERVE_NO_GRAD = SERVE.replace("@torch.inference_mode()  # DECORATOR", "@torch.no_grad()  # DECORATOR")


def _ad307(outcome):
    return [d for d in outcome.diagnoses if d.code == "AD307"]


def test_a_decorated_method_that_backpropagates_is_named(tmp_path):
    outcome = run_as_script(tmp_path, TEMPERATURE_FIT)
    found = _ad307(outcome)
    assert found and found[0].primary.line == outcome.line("DECORATOR")
    assert found[0].help[0].message.startswith("delete this @torch.no_grad() line: fit() computes a loss")
    fixed = apply_replacement(outcome.source, found[0].help[0].location, found[0].help[0].replacement)
    got = run_plain(tmp_path, fixed, name="fixed.py")["result"]
    want = run_plain(tmp_path, TEMPERATURE_ANSWER, name="answer.py")["result"]
    assert all(torch.equal(got[k], want[k]) for k in want)


def test_an_inference_mode_caller_is_named(tmp_path):
    outcome = run_as_script(tmp_path, SERVE)
    found = _ad307(outcome)
    assert found and found[0].primary.line == outcome.line("DECORATOR")
    assert "@torch.inference_mode()" in found[0].help[0].message
    fixed = apply_replacement(outcome.source, found[0].help[0].location, found[0].help[0].replacement)
    got = run_plain(tmp_path, fixed, name="fixed.py")["result"]
    want = run_plain(tmp_path, SERVE_ANSWER, name="answer.py")["result"]
    assert all(torch.equal(got[k], want[k]) for k in want)


def test_correct_near_twins_stay_silent(tmp_path):
    for source in (SERVE_TWIN, TEMPERATURE_TWIN):
        outcome = run_as_script(tmp_path, source)
        assert outcome.diagnoses == []


def test_a_no_grad_caller_is_not_this_check(tmp_path):
    outcome = run_as_script(tmp_path, SERVE_NO_GRAD)
    assert _ad307(outcome) == []


# AD115 when the function that sets `x.requires_grad = True` on a computed tensor then reads
# `x.grad` (set 29's tensorwatch#25: `_backprop` sets the flag and returns `inp.grad`). The help
# `x.requires_grad_(True)` ran on and failed later (a computed tensor's .grad stays None); the line
# treats x as a leaf, so the help makes it one where it is computed. Another shape: an FGSM helper
# of adversarial training, given the output of a trainable normalizer.
FGSM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Normalizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return x * self.scale


def fgsm(model, x, y, eps=0.1):
    x.requires_grad = True  # FLAG
    loss = F.cross_entropy(model(x), y)
    model.zero_grad()
    loss.backward()
    return (x + eps * x.grad.sign()).detach()


norm, model = Normalizer(), nn.Linear(4, 3)
optimizer = torch.optim.SGD(list(norm.parameters()) + list(model.parameters()), lr=0.1)
losses = []
for step in range(3):
    images, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
    x = norm(images)
    adv = fgsm(model, x, labels)  # CALL
    loss = F.cross_entropy(model(x), labels) + F.cross_entropy(model(adv), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in optimizer.param_groups[0]["params"]]}
"""
FGSM_ANSWER = FGSM.replace("adv = fgsm(model, x, labels)  # CALL", "adv = fgsm(model, x.detach(), labels)  # CALL")
# Near-twin: the flag set on a computed tensor whose .grad is never read keeps requires_grad_ as its help.
FLAG_ONLY = FGSM.replace("return (x + eps * x.grad.sign()).detach()", "return loss.detach()").replace(
    "adv = fgsm(model, x, labels)  # CALL", "adv = x + fgsm(model, x, labels)  # CALL")


def test_a_flag_on_a_computed_input_whose_grad_is_read_becomes_a_leaf(tmp_path):
    outcome = run_as_script(tmp_path, FGSM)
    found = next(d for d in outcome.diagnoses if d.code == "AD115")
    assert found.primary.line == outcome.line("FLAG")
    help_ = found.help[0]
    assert help_.replacement == "x = (x if x.is_leaf else x.detach()).requires_grad_(True)"
    fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
    got = run_plain(tmp_path, fixed, name="fixed.py")["result"]
    want = run_plain(tmp_path, FGSM_ANSWER, name="answer.py")["result"]
    assert torch.equal(got["losses"], want["losses"])
    assert all(torch.equal(a, b) for a, b in zip(got["params"], want["params"]))


def test_the_answer_is_silent_and_a_flag_without_a_grad_read_keeps_its_help(tmp_path):
    assert run_as_script(tmp_path, FGSM_ANSWER).diagnoses == []
    outcome = run_as_script(tmp_path, FLAG_ONLY)
    help_ = next(d for d in outcome.diagnoses if d.code == "AD115").help[0]
    assert help_.replacement == "x.requires_grad_(True)"
