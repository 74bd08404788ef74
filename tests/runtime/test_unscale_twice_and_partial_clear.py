"""AD248 (a GradScaler's unscale_() given a wrapper of the optimizer: scaler.step() divides the
same gradients a second time) and AD229 (`model.zero_grad()` leaves the gradients of the other
parameters the optimizer steps: they are never cleared). Found in set 26, part A
(tests/bug_reports/fresh/set26: accelerate#113, poutyne#12). Each: the buggy program (code, line,
help), the help applied gives the hand-written correct values, a correct near-twin stays silent,
and another shape of the same cause is found."""

import pytest
import torch

from helpers import apply_help, grads_equal, run_plain, run_program

AMP_PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
batches = [(torch.randn(6, 4), torch.randn(6, 2)) for _ in range(4)]


class Wrapped:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def step(self):
        scaler.step(self.optimizer)  # SECOND
        scaler.update()

    def zero_grad(self):
        self.optimizer.zero_grad()


wrapped = Wrapped(optimizer)
"""

AMP_BUGGY = AMP_PRELUDE + """
for x, y in batches:
    wrapped.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(wrapped)  # UNSCALE
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    wrapped.step()
result = [p.detach().clone() for p in model.parameters()]
"""

AMP_CORRECT = AMP_BUGGY.replace("scaler.unscale_(wrapped)  # UNSCALE", "scaler.unscale_(wrapped.optimizer)  # UNSCALE")


def test_unscale_of_a_wrapper_is_ad248_with_the_inner_optimizer_as_help(tmp_path):
    outcome = run_program(tmp_path, AMP_BUGGY)
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses  # not AD210 as well: the clipping saw unscaled gradients
    assert diagnosis.code == "AD248"
    assert diagnosis.primary.line == outcome.line("UNSCALE")
    assert [r.line for r in diagnosis.related] == [outcome.line("SECOND")]
    assert "(256)" in diagnosis.primary.note and "Wrapped" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "scaler.unscale_(wrapped.optimizer)"


def test_ad248_help_applied_gives_the_correct_parameters(tmp_path):
    outcome = run_program(tmp_path, AMP_BUGGY)
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, AMP_CORRECT, name="correct.py")
    assert grads_equal(fixed["result"], correct["result"])
    buggy = run_plain(tmp_path, AMP_BUGGY, name="buggy.py")
    assert not grads_equal(buggy["result"], correct["result"])


@pytest.mark.parametrize("mode", ["light", "full"])
def test_unscale_of_the_inner_optimizer_through_the_wrapper_is_silent(tmp_path, mode):
    outcome = run_program(tmp_path, AMP_CORRECT, mode=mode)
    assert outcome.error is None and outcome.diagnoses == []
    plain = run_plain(tmp_path, AMP_CORRECT, name="plain.py")
    assert grads_equal(outcome.namespace["result"], plain["result"])


def test_a_framework_wrapper_under_another_attribute_name_is_found(tmp_path):
    # Lightning-style: the wrapper keeps the optimizer as `_optimizer` and copies param_groups.
    outcome = run_program(tmp_path, AMP_PRELUDE + """
class LightningOptimizer:
    def __init__(self, optimizer):
        self._optimizer = optimizer
        self.param_groups = optimizer.param_groups


def training_step(opt, x, y):
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(opt)  # UNSCALE
    scaler.step(opt._optimizer)  # SECOND
    scaler.update()
    opt._optimizer.zero_grad()


lightning_optimizer = LightningOptimizer(optimizer)
for x, y in batches:
    training_step(lightning_optimizer, x, y)
""")
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD248" and diagnosis.primary.line == outcome.line("UNSCALE")
    assert diagnosis.help[0].replacement == "scaler.unscale_(opt._optimizer)"


CLEAR_PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CenterLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(3, 2))

    def forward(self, out, y):
        return F.cross_entropy(out, y) + ((out - self.centers[y]) ** 2).mean()


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
criterion = CenterLoss()
optimizer = torch.optim.SGD(list(model.parameters()) + list(criterion.parameters()), lr=0.1)
batches = [(torch.randn(6, 4), torch.randint(0, 2, (6,))) for _ in range(4)]
"""

CLEAR_BUGGY = CLEAR_PRELUDE + """
for x, y in batches:
    model.zero_grad()  # CLEAR
    criterion(model(x), y).backward()
    optimizer.step()  # STEP
result = [p.detach().clone() for p in list(model.parameters()) + list(criterion.parameters())]
"""

CLEAR_CORRECT = CLEAR_BUGGY.replace("model.zero_grad()  # CLEAR", "optimizer.zero_grad()  # CLEAR")


def test_model_zero_grad_with_loss_parameters_in_the_optimizer_is_ad229(tmp_path):
    outcome = run_program(tmp_path, CLEAR_BUGGY)
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD229" and len(outcome.warnings) == 1
    assert diagnosis.primary.line == outcome.line("CLEAR")
    assert [r.line for r in diagnosis.related] == [outcome.line("STEP")]
    assert "1 parameter outside it ([3, 2])" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "optimizer.zero_grad()"


def test_ad229_help_applied_gives_the_correct_parameters(tmp_path):
    outcome = run_program(tmp_path, CLEAR_BUGGY)
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, CLEAR_CORRECT, name="correct.py")
    assert grads_equal(fixed["result"], correct["result"])


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("clearing", [
    "optimizer.zero_grad()  # CLEAR",
    "model.zero_grad(); criterion.zero_grad()  # CLEAR",
])
def test_clearing_every_parameter_the_optimizer_steps_is_silent(tmp_path, mode, clearing):
    source = CLEAR_BUGGY.replace("model.zero_grad()  # CLEAR", clearing)
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None and outcome.diagnoses == []
    plain = run_plain(tmp_path, source, name="plain.py")
    assert grads_equal(outcome.namespace["result"], plain["result"])


def test_model_zero_grad_over_the_whole_optimizer_is_silent(tmp_path):
    source = CLEAR_PRELUDE + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in batches:
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
"""
    assert run_program(tmp_path, source).diagnoses == []


def test_a_second_network_in_the_optimizer_cleared_in_a_method_is_ad229(tmp_path):
    outcome = run_program(tmp_path, CLEAR_PRELUDE + """
class Trainer:
    def __init__(self, backbone, head):
        self.backbone, self.head = backbone, head
        self.opt = torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), lr=1e-2)

    def fit_batch(self, x, y):
        self.backbone.zero_grad()  # CLEAR
        F.cross_entropy(self.head(torch.tanh(self.backbone(x))), y).backward()
        self.opt.step()


trainer = Trainer(nn.Linear(4, 5), nn.Linear(5, 3))
for x, y in batches:
    trainer.fit_batch(x, y)
""")
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD229" and diagnosis.primary.line == outcome.line("CLEAR")
    assert diagnosis.help[0].replacement == "self.opt.zero_grad()"
