"""`x.detach().requires_grad_()` makes a leaf to differentiate with respect to (a saliency map, an
attribution, an adversarial input): the parameters behind the cut get no gradient because that is
the point. AD301 says "the gradient path from the loss was cut" there only when an optimizer holds
those parameters (training meant them to learn from this loss); otherwise it stays silent. Held-out
set 23 (fastinference#44): AD301's help "remove the detach()" changed nothing the program computed
and was counted wrong."""

import pytest

from helpers import marked_line, run_program

ATTRIBUTION = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.rnn = nn.GRU(8, 6, batch_first=True)
        self.head = nn.Linear(6, 3)

    def forward(self, emb):
        out, _ = self.rnn(emb)
        return self.head(out[:, -1])


model = Classifier().eval()


def saliency(tokens, label):
    model.zero_grad()
    LEAF_STATEMENTS
    model(emb).softmax(-1)[0, label].backward()
    return emb.grad.abs().sum(-1)


tokens = torch.randint(0, 20, (1, 5))
maps = [saliency(tokens, label) for label in range(3)]
"""

FORMS = {
    "chained": "emb = model.embed(tokens).detach().requires_grad_(True)",
    "through_clone": "emb = model.embed(tokens).detach().clone().requires_grad_()",
    "flag_set_after": "emb = model.embed(tokens).detach()\n    emb.requires_grad = True",
    "method_after": "emb = model.embed(tokens).detach()\n    emb.requires_grad_()",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_leaf_made_on_purpose_with_no_optimizer_is_not_a_cut(tmp_path, form):
    outcome = run_program(tmp_path, ATTRIBUTION.replace("LEAF_STATEMENTS", FORMS[form]))
    assert outcome.error is None
    assert "AD301" not in [d.code for d in outcome.diagnoses]
    assert len(outcome.namespace["maps"]) == 3


TRAINING = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)


model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(3):
    features = model.encoder(x).detach().requires_grad_()  # CUT
    loss = ((model.head(features) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_the_same_leaf_is_still_a_cut_when_an_optimizer_trains_what_it_cuts_off(tmp_path):
    outcome = run_program(tmp_path, TRAINING)
    found = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert found, outcome.diagnoses
    assert found[0].primary.line == marked_line(outcome.source, "CUT")
