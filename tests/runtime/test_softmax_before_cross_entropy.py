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


# The twenty-second set of docs/real-code.md: pytorch-adapt's SymNets test hands cross_entropy a
# slice of a softmax taken over two classifiers' concatenated scores. Still normalised twice, but
# dropping the softmax would normalise over the slice alone: the help is nll_loss of the log.
JOINT_SOFTMAX_SLICED = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    first, second = nn.Linear(6, 3), nn.Linear(6, 3)
    optimizer = torch.optim.SGD([*first.parameters(), *second.parameters()], lr=0.1)
    x, labels = torch.randn(8, 6), torch.randint(0, 3, (8,))
    for step in range(2):
        optimizer.zero_grad()
        joint = F.softmax(torch.cat([first(x), second(x)], dim=1), dim=1)  # SOFTMAX
        loss = F.cross_entropy(joint[:, :3], labels) + F.cross_entropy(joint[:, 3:], labels)
        loss.backward()  # BACKWARD
        optimizer.step()
"""

# Another shape of it: a module ending in nn.Softmax, the loss reading a narrowed part of its axis.
SOFTMAX_LAYER_NARROWED = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 6), nn.Softmax(dim=-1))  # SOFTMAX
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, labels = torch.randn(7, 5), torch.randint(0, 4, (7,))
    for step in range(2):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x).narrow(1, 0, 4), labels)
        loss.backward()
        optimizer.step()
"""


def test_a_slice_of_a_wider_softmax_gets_the_log_probability_help_and_no_patch(tmp_path):
    outcome = run_program(tmp_path, JOINT_SOFTMAX_SLICED)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD160", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("BACKWARD")  # two slices read `joint`: no one line to change
    assert [h.replacement for h in diagnosis.help] == [None]
    assert "give nll_loss torch.log of those probabilities" in diagnosis.help[0].message
    assert "drop the softmax before it" not in diagnosis.help[0].message


def test_a_narrowed_softmax_layer_is_named_and_not_removed(tmp_path):
    outcome = run_program(tmp_path, SOFTMAX_LAYER_NARROWED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD160", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SOFTMAX")
    assert [h.replacement for h in diagnosis.help] == [None]  # removing the layer would change the loss
    assert "give nll_loss torch.log of those probabilities" in diagnosis.help[0].message


def test_a_batch_slice_of_a_softmax_keeps_the_help_that_drops_it(tmp_path):
    outcome = run_program(tmp_path, FUNCTIONAL_SOFTMAX.replace("loss = criterion(probabilities, labels)",
                                                               "loss = criterion(probabilities[:6], labels[:6])"))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD160"
    # the whole class axis: dropping the softmax is right, and the help says so (no patch: the loss
    # reads `probabilities[:6]`, not the name the site finder follows)
    assert "drop the softmax before it" in diagnosis.help[0].message


def test_nll_loss_of_the_log_of_a_wider_softmax_slice_says_nothing(tmp_path):
    correct = JOINT_SOFTMAX_SLICED.replace("F.cross_entropy(joint[:, :3], labels) + F.cross_entropy(joint[:, 3:], labels)",
                                           "F.nll_loss(torch.log(joint[:, :3]), labels) "
                                           "+ F.nll_loss(torch.log(joint[:, 3:]), labels)")
    outcome = run_program(tmp_path, correct)
    assert outcome.error is None
    assert outcome.diagnoses == []
