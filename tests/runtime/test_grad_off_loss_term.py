"""AD246: a loss term made from a trained module's output under `no_grad` changes the loss but
trains nothing; the parameters only it reaches get no gradient; nothing fails (held-out sets 18
and 20: Text2Light's CLIP term on codes decoded under no_grad, Ada-CM's SupCon term on features
computed under no_grad; both undiagnosed on the first run). The two programs here are other
shapes of the same cause, written before the check was run on them: an auxiliary head evaluated
under `no_grad`, and a VAE's perceptual term on a reconstruction decoded under
`set_grad_enabled(False)` inside a step function. The near-twins keep under no_grad only targets
(pseudo-labels, an EMA teacher's output) used with a term that carries a graph."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

AUX_HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.head = nn.Linear(12, 3)
        self.aux_head = nn.Linear(12, 2)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    x, y, y_aux = torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randint(0, 2, (8,))
    feats = net.backbone(x)
    main = F.cross_entropy(net.head(feats), y)
    with torch.no_grad():  # BLOCK
        aux_logits = net.aux_head(feats)
    aux_loss = F.cross_entropy(aux_logits, y_aux)  # TERM
    loss = main + 0.3 * aux_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
params = [p.detach().clone() for p in net.parameters()]
"""

AUX_HEAD_ANSWER = AUX_HEAD.replace("    with torch.no_grad():  # BLOCK\n        aux_logits = net.aux_head(feats)\n",
                                   "    aux_logits = net.aux_head(feats)\n")

VAE = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 8))

    def decode(self, z):
        return self.dec(z)


def train_step(vae, opt, batch):
    mu, log_var = vae.enc(batch).chunk(2, dim=-1)
    z = mu + torch.randn_like(mu) * (0.5 * log_var).exp()
    kl = -0.5 * (1 + log_var - mu ** 2 - log_var.exp()).sum(-1).mean()
    with torch.set_grad_enabled(False):  # BLOCK
        recon = vae.decode(z)
    perceptual = (recon - batch).abs().mean()  # TERM
    loss = kl + perceptual
    opt.zero_grad()
    loss.backward()
    opt.step()


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
for step in range(3):
    train_step(vae, opt, torch.randn(5, 8))
params = [p.detach().clone() for p in vae.parameters()]
"""

VAE_ANSWER = VAE.replace("    with torch.set_grad_enabled(False):  # BLOCK\n        recon = vae.decode(z)\n",
                         "    recon = vae.decode(z)\n")

CASES = {"an auxiliary head under no_grad": (AUX_HEAD, AUX_HEAD_ANSWER, "aux_loss"),
         "a VAE's decoder under set_grad_enabled(False)": (VAE, VAE_ANSWER, "perceptual")}


@pytest.mark.parametrize("name", list(CASES))
def test_the_grad_off_block_is_named(tmp_path, name):
    source, _answer, term = CASES[name]
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD246"]
    assert diagnosis.primary.line == outcome.line("BLOCK")
    assert f"{term} is computed from it" in diagnosis.primary.note
    assert diagnosis.related[0].line == outcome.line("TERM")


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    source, answer_source, _term = CASES[name]
    outcome = run_program(tmp_path, source)
    change = next(d for d in outcome.diagnoses if d.code == "AD246").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, source, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "pseudo-labels under no_grad": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y, unlabelled = torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8, 6)
    ce = F.cross_entropy(model(x), y)
    with torch.no_grad():
        pseudo = model(unlabelled).argmax(-1)
    consistency = F.cross_entropy(model(unlabelled + 0.1 * torch.randn_like(unlabelled)), pseudo)
    loss = ce + 0.5 * consistency
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "an EMA teacher's output as the target": """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
teacher = copy.deepcopy(student).requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    with torch.no_grad():
        target = teacher(x).softmax(-1)
    distill = F.kl_div(student(x).log_softmax(-1), target, reduction="batchmean")
    loss = F.cross_entropy(student(x), y) + distill
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.mul_(0.9).add_(0.1 * s)
""",
}


@pytest.mark.parametrize("name", list(SILENT))
def test_targets_under_no_grad_are_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD246"], name
