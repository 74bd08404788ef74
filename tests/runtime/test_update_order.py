"""AD208 (clipping where it does not change the step) and AD209 (gradients never cleared between
two steps) stay silent on correct training loops: clipping between backward() and step(),
gradient accumulation over several backward() calls (clipped once, before the step: clipping
after each of them is AD212), each way of clearing (zero_grad with or
without set_to_none, `p.grad = None`, a write of zeros through `.data`), two optimizers whose
losses share a model (a GAN), a clip made only every other step, and mixed precision's GradScaler
used as PyTorch's AMP guide says (AD210: unscale_ before clipping, with accumulation, turned off,
two optimizers). The parameters under the doctor are bitwise those of a plain run. The buggy
programs are in tests/silent (AD208, AD209, AD210)."""

import pytest

from helpers import grads_equal, run_plain, run_program

PRELUDE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
batches = [(torch.randn(6, 4), torch.randn(6, 2)) for _ in range(5)]
"""

CORRECT = {
    "clip between backward and step": """
for x, y in batches:
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)
    optimizer.step()
""",
    "accumulation over two backward calls, cleared after the step": """
for index, (x, y) in enumerate(batches * 2):
    (F.mse_loss(model(x), y) / 2).backward()
    if index % 2 == 1:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        optimizer.zero_grad()
""",
    "zeros written without set_to_none": """
for x, y in batches:
    optimizer.zero_grad(set_to_none=False)
    F.mse_loss(model(x), y).backward()
    optimizer.step()
""",
    "model.zero_grad after the step": """
for x, y in batches:
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    model.zero_grad()
""",
    "grad set to None by hand": """
for x, y in batches:
    for p in model.parameters():
        p.grad = None
    F.mse_loss(model(x), y).backward()
    optimizer.step()
""",
    "zeros written through .data by hand": """
for x, y in batches:
    F.mse_loss(model(x), y).backward()
    optimizer.step()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data.zero_()
""",
    "a GAN whose generator loss goes through the discriminator": """
generator = nn.Linear(3, 4)
g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
for x, _ in batches:
    optimizer.zero_grad(set_to_none=False)
    fake = generator(torch.randn(6, 3))
    d_loss = model(x).mean() - model(fake.detach()).mean()
    d_loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    g_optimizer.zero_grad()
    model(fake).mean().backward()
    g_optimizer.step()
""",
    "AMP: unscale_, clip, scaler.step": """
scaler = torch.amp.GradScaler("cpu")
for x, y in batches:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    scaler.step(optimizer)
    scaler.update()
""",
    "AMP with accumulation: unscale_ and clip in the step's block": """
scaler = torch.amp.GradScaler("cpu")
for index, (x, y) in enumerate(batches * 2):
    scaler.scale(F.mse_loss(model(x), y) / 2).backward()
    if index % 2 == 1:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
    "AMP turned off (enabled=False): clipping before scaler.step": """
scaler = torch.amp.GradScaler("cpu", enabled=False)
for x, y in batches:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    scaler.step(optimizer)
    scaler.update()
""",
    "AMP: two optimizers, one clipped after its unscale_": """
head = nn.Linear(2, 1)
head_optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for x, y in batches:
    optimizer.zero_grad()
    head_optimizer.zero_grad()
    scaler.scale(head(model(x)).pow(2).mean()).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    scaler.step(optimizer)
    scaler.step(head_optimizer)
    scaler.update()
""",
    "a clip made every other step": """
for index, (x, y) in enumerate(batches):
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    if index % 2 == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
""",
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_training_loop_is_silent_and_unchanged(tmp_path, name, mode):
    source = PRELUDE + CORRECT[name] + "grads = [p.detach().clone() for p in model.parameters()]\n"
    plain = run_plain(tmp_path, source, "plain.py")
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == [] and outcome.warnings == [], [str(d) for d in outcome.diagnoses]
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_a_clip_after_each_backward_of_an_accumulation_is_ad212_and_changes_nothing(tmp_path):
    # Each clipping call clips the sum accumulated so far and the next backward() adds to it: the
    # step applies clipped partial sums (AD212, transformers#1563), not unclipped gradients (AD208).
    # The step() is outside the inner loop that clips: where to clip is advice.
    source = PRELUDE + """
for x, y in batches:
    optimizer.zero_grad(set_to_none=False)
    for half in (x[:3], x[3:]):
        F.mse_loss(model(half), y[:3]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)  # CLIP
    optimizer.step()
grads = [p.detach().clone() for p in model.parameters()]
"""
    plain = run_plain(tmp_path, source, "plain.py")
    outcome = run_program(tmp_path, source)
    assert [d.code for d in outcome.diagnoses] == ["AD212"]
    assert outcome.diagnoses[0].primary.line == outcome.line("CLIP")
    assert outcome.diagnoses[0].help[0].replacement is None
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_a_clip_before_backward_in_a_function_is_reported_with_advice(tmp_path):
    # The clip is in a helper: the statements are not siblings of one block, so the help is advice.
    outcome = run_program(tmp_path, PRELUDE + """
def clip():
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)  # CLIP

for x, y in batches:
    optimizer.zero_grad()
    clip()
    F.mse_loss(model(x), y).backward()
    optimizer.step()
""")
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD208"]
    assert diagnosis.primary.line == outcome.line("CLIP")
    assert diagnosis.help[0].replacement is None
    assert "between the backward()" in diagnosis.help[0].message


def test_the_missing_clear_is_reported_once_with_the_optimizer_named(tmp_path):
    outcome = run_program(tmp_path, PRELUDE + """
for x, y in batches:
    loss = F.mse_loss(model(x), y)
    loss.backward()  # BACKWARD
    torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    optimizer.step()  # STEP
""")
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD209" and len(outcome.warnings) == 1
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert diagnosis.related[0].line == outcome.line("STEP")
    assert diagnosis.help[0].replacement == "optimizer.zero_grad()\nloss.backward()"


def test_the_clipping_functions_are_restored_when_the_doctor_stops():
    import torch
    import torch.nn.utils.clip_grad as clip_grad

    import autograd_doctor

    before = (torch.nn.utils.clip_grad_norm_, torch.nn.utils.clip_grad_value_, clip_grad.clip_grad_norm_)
    with autograd_doctor.watch():
        wrapped = torch.nn.utils.clip_grad_norm_
        assert wrapped is not before[0] and wrapped.__name__ == "clip_grad_norm_"
        weight = torch.nn.Parameter(torch.ones(3))
        (weight * 4).sum().backward()
        total = wrapped((p for p in [weight]), 1.0)  # a generator is read once, for torch and for us
        assert torch.equal(total, torch.tensor(4 * 3 ** 0.5)) and weight.grad.norm() <= 1.0 + 1e-6
    assert (torch.nn.utils.clip_grad_norm_, torch.nn.utils.clip_grad_value_, clip_grad.clip_grad_norm_) == before


def test_an_empty_generator_gets_torchs_own_warning_at_the_users_line(tmp_path):
    source = """
import warnings
import torch
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    torch.nn.utils.clip_grad_norm_((p for p in []), 1.0)  # CLIP
seen = [(str(w.message), w.filename, w.lineno) for w in caught]
"""
    plain = run_plain(tmp_path, source, "plain.py")
    outcome = run_program(tmp_path, source, "plain.py")
    assert outcome.error is None
    assert [message for message, _, _ in outcome.namespace["seen"]] == [m for m, _, _ in plain["seen"]]
    assert [line for _, _, line in outcome.namespace["seen"]] == [line for _, _, line in plain["seen"]]
    assert plain["seen"] and plain["seen"][0][2] == outcome.line("CLIP")


TWO_OPTIMIZERS_ONE_NEVER_CLEARED = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 10))
critic = nn.Sequential(nn.Linear(10, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_e = torch.optim.SGD(encoder.parameters(), lr=0.1)
opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)
batches = [torch.randn(6, 10) for _ in range(4)]
for x in batches:
    rec = encoder(x)
    loss_c = F.softplus(critic(rec.detach())).mean() + F.softplus(-critic(x)).mean()
    loss_c.backward()  # CRITIC BACKWARD
    opt_c.step()
    opt_e.zero_grad()
    loss_e = F.mse_loss(rec, x) + 0.1 * F.softplus(-critic(rec)).mean()
    loss_e.backward()  # ENCODER BACKWARD
    opt_e.step()
params = [p.detach().clone() for p in [*encoder.parameters(), *critic.parameters()]]
"""


def test_the_clear_goes_before_the_backward_whose_gradients_the_step_applies(tmp_path):
    """The critic's gradients are never cleared; the encoder's backward, after the critic's
    step, also adds to them. zero_grad() goes before the critic's own backward (clearing
    before the encoder's would make the critic's step apply the encoder loss's gradients)."""
    from autograd_doctor.analysis.fixes import apply_replacement

    outcome = run_program(tmp_path, TWO_OPTIMIZERS_ONE_NEVER_CLEARED)
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD209"
    help_ = diagnosis.help[0]
    assert help_.location.line == outcome.line("CRITIC BACKWARD")
    assert help_.replacement == "opt_c.zero_grad()\nloss_c.backward()"
    fixed = apply_replacement(TWO_OPTIMIZERS_ONE_NEVER_CLEARED, help_.location, help_.replacement)
    correct = TWO_OPTIMIZERS_ONE_NEVER_CLEARED.replace(
        "    loss_c.backward()  # CRITIC BACKWARD", "    opt_c.zero_grad()\n    loss_c.backward()")
    assert grads_equal(run_plain(tmp_path, fixed)["params"], run_plain(tmp_path, correct, "correct.py")["params"])


def test_the_grad_scaler_is_restored_when_the_doctor_stops():
    import torch

    import autograd_doctor

    before = torch.amp.GradScaler.__dict__["unscale_"]
    with autograd_doctor.watch():
        assert torch.amp.GradScaler.__dict__["unscale_"] is not before
    assert torch.amp.GradScaler.__dict__["unscale_"] is before


def test_a_clip_before_unscale_in_another_function_than_the_step_gets_advice(tmp_path):
    outcome = run_program(tmp_path, PRELUDE + """
scaler = torch.amp.GradScaler("cpu")


def clip(parameters):
    torch.nn.utils.clip_grad_norm_(parameters, 0.1)  # CLIP


for x, y in batches[:2]:
    optimizer.zero_grad()
    scaler.scale(F.mse_loss(model(x), y)).backward()  # BACKWARD
    clip(model.parameters())
    scaler.step(optimizer)  # STEP
    scaler.update()
""")
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD210" and len(outcome.warnings) == 1
    assert diagnosis.primary.line == outcome.line("CLIP")
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD"), outcome.line("STEP")]
    assert "(65536)" in diagnosis.primary.note
    (help_,) = diagnosis.help
    assert help_.replacement is None and "unscale_" in help_.message
