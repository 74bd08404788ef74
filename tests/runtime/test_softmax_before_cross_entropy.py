"""AD160: `F.cross_entropy` given a softmax's output, the scores normalised twice (set 15's ACGAN
class head was the held-out case; the programs below are others of the same cause: a classifier
module ending in `nn.Softmax`, and a functional softmax handed to the loss). Named at the softmax;
the help drops it, and the program then trains as the intended one. Cross-entropy of raw scores,
an attention softmax inside the network and `nll_loss` of the log of probabilities stay silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

CLASSIFIER_ENDING_IN_SOFTMAX = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
            self.head = nn.Sequential(nn.Linear(16, 4), nn.Softmax(dim=1))  # SOFTMAX

        def forward(self, x):
            return self.head(self.body(x))


    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x, labels = torch.randn(12, 6), torch.randint(0, 4, (12,))
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = CLASSIFIER_ENDING_IN_SOFTMAX.replace("nn.Sequential(nn.Linear(16, 4), nn.Softmax(dim=1))  # SOFTMAX",
                                                "nn.Sequential(nn.Linear(16, 4))  # SOFTMAX")

FUNCTIONAL_SOFTMAX = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Linear(5, 3)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    x, labels = torch.randn(10, 5), torch.randint(0, 3, (10,))
    for step in range(3):
        optimizer.zero_grad()
        probabilities = F.softmax(model(x), dim=-1)  # SOFTMAX
        loss = criterion(probabilities, labels)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""


def test_the_softmax_layer_is_named_and_the_help_removes_it(tmp_path):
    outcome = run_program(tmp_path, CLASSIFIER_ENDING_IN_SOFTMAX)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD160", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SOFTMAX")
    assert diagnosis.help[0].replacement == "self.head = nn.Sequential(nn.Linear(16, 4))"
    assert "remove the nn.Softmax layer" in diagnosis.help[0].message


def test_the_help_applied_trains_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, CLASSIFIER_ENDING_IN_SOFTMAX)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, outcome.source, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))


def test_a_functional_softmax_read_only_by_the_loss_is_replaced_by_the_scores(tmp_path):
    outcome = run_program(tmp_path, FUNCTIONAL_SOFTMAX)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD160"
    assert diagnosis.primary.line == outcome.line("SOFTMAX")
    assert diagnosis.help[0].replacement == "probabilities = model(x)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, FUNCTIONAL_SOFTMAX.replace("F.softmax(model(x), dim=-1)", "model(x)"), "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_raw_scores_an_attention_softmax_and_the_log_of_probabilities_say_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        query, key, head = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 3)
        params = [*query.parameters(), *key.parameters(), *head.parameters()]
        optimizer = torch.optim.SGD(params, lr=0.1)
        x, labels = torch.randn(2, 5, 4), torch.randint(0, 3, (2,))
        for step in range(2):
            optimizer.zero_grad()
            attention = torch.softmax(query(x) @ key(x).transpose(1, 2), dim=-1)
            logits = head((attention @ x).mean(1))
            probabilities = torch.softmax(logits, dim=1)
            loss = F.cross_entropy(logits, labels) + F.nll_loss(torch.log(probabilities), labels)
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []
