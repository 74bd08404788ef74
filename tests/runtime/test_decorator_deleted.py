"""AD307's help deletes the `@torch.no_grad()` / `@torch.inference_mode()` decorator as code (the
decorator and the line after it, replaced by that line), so `--verify-fix` and `run --fix` can
apply it; in an installed library it stays advice. Held-out set 9 (transformers#3720, a REINFORCE
loss on a `@torch.no_grad()` `generate()`) had only advice on the first run; this program is
another one: a model's `score()` method, decorated, used by the training loss."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_as_script, run_plain

DECORATED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

    @torch.no_grad()  # DECORATOR
    def score(self, items):
        return self.body(items).squeeze(-1)


ranker = Ranker()
optimizer = torch.optim.SGD(ranker.parameters(), lr=0.1)
items, relevance = torch.randn(10, 5), torch.rand(10)
for step in range(3):
    loss = F.mse_loss(ranker.score(items), relevance)
    optimizer.zero_grad()
    loss.backward()  # BACKWARD
    optimizer.step()
params = [p.detach().clone() for p in ranker.parameters()]
"""

ANSWER = DECORATED.replace("    @torch.no_grad()  # DECORATOR\n", "")


def test_the_decorator_is_named_and_its_deletion_is_code(tmp_path):
    outcome = run_as_script(tmp_path, DECORATED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD307")
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    help_ = diagnosis.help[0]
    assert help_.message.startswith("delete this @torch.no_grad() line")
    assert (help_.location.line, help_.location.end_line) == (outcome.line("DECORATOR"), outcome.line("DECORATOR") + 1)
    assert help_.replacement == "def score(self, items):"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_as_script(tmp_path, DECORATED)
    help_ = next(d for d in outcome.diagnoses if d.code == "AD307").help[0]
    fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
    assert "no_grad" not in fixed
    params = run_plain(tmp_path, fixed)["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(params, answer))


def test_a_decorator_in_an_installed_library_stays_advice(tmp_path, monkeypatch):
    from autograd_doctor.analysis.errors import grad_api

    path = tmp_path / "site-packages" / "somelib" / "ranking.py"
    path.parent.mkdir(parents=True)
    path.write_text("import torch\n\n@torch.no_grad()\ndef score(x):\n    return x\n")
    assert grad_api._decorator_deletion(str(path), 3, "delete it") is None
    local = tmp_path / "ranking.py"
    local.write_text(path.read_text())
    assert grad_api._decorator_deletion(str(local), 3, "delete it").replacement == "def score(x):"
