"""AD156: a loss that reads log-probabilities (`nll_loss` / `NLLLoss`, `kl_div` / `KLDivLoss`)
given a softmax's output. Nothing is raised; the gradient is not the one of the loss meant (held-out
set 14, microsoft/ProDA#20: `F.kl_div(F.softmax(...), teacher)`, undiagnosed on the first run).
This program is another one: a digit classifier trained with `nn.NLLLoss` on probabilities."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

NLL_OF_PROBABILITIES = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = torch.randn(12, 8), torch.randint(0, 4, (12,))
    for step in range(3):
        optimizer.zero_grad()
        probs = torch.softmax(model(x), dim=1)  # PROBS
        loss = criterion(probs, y)  # LOSS
        loss.backward()  # BACKWARD
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

MEANT = NLL_OF_PROBABILITIES.replace("torch.softmax(model(x), dim=1)", "torch.log_softmax(model(x), dim=1)")

# The probabilities are also read for an accuracy: the log is taken at the loss instead.
PROBABILITIES_READ_TWICE = NLL_OF_PROBABILITIES.replace(
    "        loss.backward()  # BACKWARD\n",
    "        loss.backward()  # BACKWARD\n        accuracy = (probs.argmax(dim=1) == y).float().mean()\n")

DISTILLED_CORRECTLY = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    student, teacher = nn.Linear(6, 5), nn.Linear(6, 5)
    x = torch.randn(10, 6)
    with torch.no_grad():
        target = F.softmax(teacher(x), dim=1)
    attention = torch.softmax(student(x), dim=1)  # a softmax elsewhere in the graph
    loss = F.kl_div(F.log_softmax(student(x) * attention, dim=1), target, reduction="batchmean")
    loss.backward()
"""


def test_the_softmax_is_named_and_made_a_log_softmax(tmp_path):
    outcome = run_program(tmp_path, NLL_OF_PROBABILITIES)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD156"]
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("PROBS")
    assert [r.line for r in diagnosis.related] == [outcome.line("LOSS"), outcome.line("BACKWARD")]
    assert diagnosis.help[0].message == "give nll_loss log-probabilities: log_softmax over the same dimension"
    assert diagnosis.help[0].replacement == "probs = torch.log_softmax(model(x), dim=1)"


def test_the_help_applied_trains_as_the_log_softmax_classifier(tmp_path):
    outcome = run_program(tmp_path, NLL_OF_PROBABILITIES)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    meant = run_plain(tmp_path, MEANT, "meant.py")
    buggy = run_plain(tmp_path, NLL_OF_PROBABILITIES, "buggy.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], meant["result"]))
    assert not all(torch.allclose(a, b) for a, b in zip(buggy["result"], meant["result"]))
    assert not [d for d in run_program(tmp_path, MEANT).diagnoses if d.code == "AD156"]


def test_probabilities_read_elsewhere_get_their_log_at_the_loss(tmp_path):
    outcome = run_program(tmp_path, PROBABILITIES_READ_TWICE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD156"]
    assert diagnosis.help[0].replacement == "loss = criterion(torch.log(probs), y)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    meant = run_plain(tmp_path, MEANT, "meant.py")
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(fixed["result"], meant["result"]))


def test_log_probabilities_given_to_kl_div_are_silent(tmp_path):
    outcome = run_program(tmp_path, DISTILLED_CORRECTLY)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD156"]


# The loss module lives on a trainer object (not a module), defined in the file that only calls it
# through `self.criterion`: the file never names KLDivLoss where the call is.
TRAINER_HOLDS_THE_LOSS = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    def make_criterion():
        return getattr(nn, "KLDivLoss")(reduction="batchmean")

    class Distiller:
        def __init__(self, student, teacher):
            self.student, self.teacher = student, teacher
            self.criterion = make_criterion()
            self.optimizer = torch.optim.SGD(student.parameters(), lr=0.1)

        def step(self, x):
            self.optimizer.zero_grad()
            with torch.no_grad():
                target = F.softmax(self.teacher(x), dim=1)
            student_probs = F.softmax(self.student(x), dim=1)  # PROBS
            loss = self.criterion(student_probs, target)  # LOSS
            loss.backward()  # BACKWARD
            self.optimizer.step()

    torch.manual_seed(0)
    trainer = Distiller(nn.Linear(6, 5), nn.Linear(6, 5))
    trainer.step(torch.randn(10, 6))
"""


def test_a_loss_module_held_by_a_trainer_object_is_found(tmp_path):
    outcome = run_program(tmp_path, TRAINER_HOLDS_THE_LOSS)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD156"]
    assert diagnosis.primary.line == outcome.line("PROBS")
    assert diagnosis.help[0].replacement == "student_probs = F.log_softmax(self.student(x), dim=1)"


def test_attention_dropout_after_a_softmax_is_silent(tmp_path):
    """Dropout on attention weights multiplies the softmax's output, as kl_div's product with its
    target does; with no log-probability loss around, nothing is reported."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn.functional as F
        from torch import nn

        torch.manual_seed(0)
        layer, drop = nn.Linear(4, 4), nn.Dropout(0.1)
        x = torch.randn(2, 3, 4)
        scores = layer(x) @ x.transpose(1, 2)
        out = drop(F.softmax(scores, dim=-1)) @ x
        F.cross_entropy(out.reshape(-1, 4), torch.randint(0, 4, (6,))).backward()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD156"]
