"""AD206 for a loss term whose values a helper collected as Python numbers: the helper appends
`t.item()` (or `float(t)`) to a list and returns `torch.tensor(that_list)` in a tuple that the
training loop unpacks; the term made from it adds to the loss's value and trains nothing.

Reported at the append; the help is advice (two lines change: append the tensor, build the result
with `torch.stack`), and applied by hand it gives a hand-written reference's parameters. Found on
set 15's GAE rollout (https://github.com/jsboige/CoursIA/pull/15256); these are other shapes.
"""

import torch

from helpers import run_plain, run_program

# REINFORCE with a learned baseline on a bandit: the episode helper keeps the baseline as floats.
BANDIT = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    ARMS = 4
    policy = nn.Linear(3, ARMS)
    baseline = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam([*policy.parameters(), *baseline.parameters()], lr=1e-2)
    payouts = torch.tensor([0.1, 0.5, 0.2, 0.9])


    def collect_episode(contexts):
        log_probs, expected = [], []
        for context in contexts:
            dist = torch.distributions.Categorical(logits=policy(context))
            arm = dist.sample()
            log_probs.append(dist.log_prob(arm))
            expected.append(float(baseline(context)))  # PRIMARY
        return torch.stack(log_probs), torch.tensor(expected)


    contexts = torch.randn(12, 3)
    for episode in range(4):
        log_probs, expected = collect_episode(contexts)
        rewards = payouts[torch.arange(12) % ARMS]
        policy_loss = -(log_probs * (rewards - expected.detach())).mean()
        baseline_loss = F.mse_loss(expected, rewards)
        loss = policy_loss + baseline_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in baseline.parameters()]
"""

BANDIT_REFERENCE = BANDIT.replace(
    "expected.append(float(baseline(context)))  # PRIMARY", "expected.append(baseline(context).squeeze())  # PRIMARY").replace(
    "return torch.stack(log_probs), torch.tensor(expected)", "return torch.stack(log_probs), torch.stack(expected)")

# A tagger with a confidence head: the decoding method keeps each confidence as a Python number.
TAGGER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(5)


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(6, 16)
            self.tags = nn.Linear(16, 3)
            self.confidence = nn.Linear(16, 1)


    def decode(model, sentences):
        scores, confidences = [], []
        for tokens in sentences:
            hidden = torch.tanh(model.body(tokens))
            scores.append(model.tags(hidden))
            confidences.append(torch.sigmoid(model.confidence(hidden.mean(0))).item())  # PRIMARY
        return torch.stack(scores), torch.as_tensor(confidences)


    model = Tagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sentences, tags = torch.randn(5, 7, 6), torch.randint(0, 3, (5, 7))
    for step in range(4):
        scores, confidence = decode(model, sentences)
        correct = (scores.argmax(-1) == tags).float().mean(-1)
        tag_loss = F.cross_entropy(scores.reshape(-1, 3), tags.reshape(-1))
        loss = tag_loss + F.binary_cross_entropy(confidence, correct)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.confidence.parameters()]
"""

TAGGER_REFERENCE = TAGGER.replace(
    "confidences.append(torch.sigmoid(model.confidence(hidden.mean(0))).item())  # PRIMARY",
    "confidences.append(torch.sigmoid(model.confidence(hidden.mean(0))).squeeze())  # PRIMARY").replace(
    "torch.as_tensor(confidences)", "torch.stack(confidences)")


def _the_diagnosis(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    return diagnosis


def test_the_append_of_a_number_in_the_helper_is_named_with_advice(tmp_path):
    for source, collected in ((BANDIT, "expected"), (TAGGER, "confidences")):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        diagnosis = _the_diagnosis(outcome)
        assert diagnosis.primary.line == outcome.line("PRIMARY")
        (advice,) = diagnosis.help
        assert advice.replacement is None
        assert f"torch.stack({collected})" in advice.message


def test_the_advice_applied_gives_the_references_parameters(tmp_path):
    for buggy, reference in ((BANDIT, BANDIT_REFERENCE), (TAGGER, TAGGER_REFERENCE)):
        expected = run_plain(tmp_path, reference, "reference.py")["result"]
        buggy_result = run_plain(tmp_path, buggy, "buggy.py")["result"]
        assert not all(torch.allclose(a, b) for a, b in zip(buggy_result, expected))  # the head never trains
        outcome = run_program(tmp_path, reference, "fixed.py")
        assert outcome.error is None and not [d for d in outcome.diagnoses if d.code == "AD206"]
        assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(outcome.namespace["result"], expected))


def test_numbers_collected_for_logging_only_are_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


        def predict(batch):
            outputs, logged = [], []
            for row in batch:
                output = model(row)
                outputs.append(output)
                logged.append(output.item())
            return torch.stack(outputs), torch.tensor(logged)


        x, y = torch.randn(8, 4), torch.randn(8, 1)
        for step in range(3):
            outputs, logged = predict(x)
            loss = F.mse_loss(outputs, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None and not outcome.diagnoses
