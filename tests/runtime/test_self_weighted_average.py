"""AD158: a loss that averages values with softmax weights computed from those same values, the
weights not detached (set 14's IWAE loss was the held-out case; the program below is another
of the same cause, a self-normalised importance-weighted objective). Named at the weights'
assignment; the help detaches them, and the program then trains as the intended one. A softmax
pooling inside the network and an entropy term are other things and stay silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

SELF_NORMALISED_OBJECTIVE = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    proposal = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 6))
    optimizer = torch.optim.Adam(proposal.parameters(), lr=1e-2)
    x = torch.randn(10, 4)


    def objective(log_weights):
        normalised = torch.softmax(log_weights, dim=1)  # WEIGHTS
        return -(normalised * log_weights).sum(dim=1).mean()


    for step in range(4):
        optimizer.zero_grad()
        log_weights = proposal(x) - 0.5 * x.pow(2).sum(1, keepdim=True)
        loss = objective(log_weights)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in proposal.parameters()]
"""

INTENDED = SELF_NORMALISED_OBJECTIVE.replace("torch.softmax(log_weights, dim=1)  # WEIGHTS",
                                             "torch.softmax(log_weights, dim=1).detach()  # WEIGHTS")


def test_the_weights_assignment_is_named_and_detached_by_the_help(tmp_path):
    outcome = run_program(tmp_path, SELF_NORMALISED_OBJECTIVE)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD158", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WEIGHTS")
    assert diagnosis.help[0].replacement == "normalised = torch.softmax(log_weights, dim=1).detach()"


def test_the_help_applied_trains_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, SELF_NORMALISED_OBJECTIVE)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, outcome.source, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))


def test_softmax_pooling_inside_the_network_and_an_entropy_term_say_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        scorer, head = nn.Linear(3, 5), nn.Linear(1, 1)
        optimizer = torch.optim.SGD([*scorer.parameters(), *head.parameters()], lr=0.1)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        for step in range(2):
            optimizer.zero_grad()
            scores = scorer(x)
            attention = F.softmax(scores, dim=-1)
            pooled = (attention * scores).sum(-1, keepdim=True)     # a softmax pooling, then more layers
            probabilities = scores.softmax(-1)
            entropy = -(probabilities * F.log_softmax(scores, -1)).sum(-1).mean()
            loss = F.mse_loss(head(pooled), y) - 0.01 * entropy
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []


def test_an_entropy_written_with_logsumexp_says_nothing(tmp_path):
    # set 15's OpenRLHF correct version: entropy = logsumexp(x) - sum(softmax(x) * x), a softmax-weighted
    # average of its own input whose gradient is the entropy's, meant in full.
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        policy = nn.Linear(4, 6)
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
        x, advantages, actions = torch.randn(5, 4), torch.randn(5), torch.randint(0, 6, (5,))
        for step in range(2):
            optimizer.zero_grad()
            logits = policy(x)
            probabilities = torch.softmax(logits, dim=-1)
            entropy = torch.logsumexp(logits, dim=-1) - torch.sum(probabilities * logits, dim=-1)
            log_probs = torch.log_softmax(logits, dim=-1).gather(-1, actions[:, None]).squeeze(-1)
            loss = -(advantages * log_probs).mean() - 0.01 * entropy.mean()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []
