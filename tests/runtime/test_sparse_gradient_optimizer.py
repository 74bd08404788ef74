"""AD173: an optimizer that takes dense gradients only (Adam, AdamW, RMSprop, ...) given the sparse
gradient of an embedding made with sparse=True. The constructor calls that ask for it are named,
and the change (sparse=False there) trains the model as the hand-written dense version does.
SGD takes sparse gradients, but its weight_decay adds the dense parameter to them and fails inside
step() with "add(sparse, dense) is not supported": the same constructions are named, the same
change trains as the dense version with that weight decay. A sparse embedding trained with SGD
without weight decay is silent."""

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.users = nn.Embedding(20, 4, sparse=SPARSE)  # USERS
        self.items = nn.EmbeddingBag(30, 4, mode="mean", sparse=SPARSE)  # ITEMS
        self.head = nn.Linear(8, 1)

    def forward(self, user, items, offsets):
        return self.head(torch.cat([self.users(user), self.items(items, offsets)], dim=1)).squeeze(1)


model = Recommender()
optimizer = OPTIMIZER
losses = []
for step in range(3):
    user, items, offsets = torch.randint(0, 20, (6,)), torch.randint(0, 30, (12,)), torch.arange(0, 12, 2)
    loss = F.binary_cross_entropy_with_logits(model(user, items, offsets), torch.rand(6))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # STEP
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""

ADAM = "torch.optim.Adam(model.parameters(), lr=1e-2)"


def program(sparse: str, optimizer: str = ADAM) -> str:
    return PROGRAM.replace("SPARSE", sparse).replace("OPTIMIZER", optimizer)


def test_adam_given_sparse_embedding_gradients_names_the_constructions_and_the_change_trains_densely(tmp_path):
    outcome = run_as_script(tmp_path, program("True"))
    assert "does not support sparse gradients" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD173"]
    assert diagnosis.primary.line == outcome.line("USERS")
    assert {location.line for location in diagnosis.related} == {outcome.line("STEP"), outcome.line("ITEMS")}
    assert any("model.users" in note and "model.items" in note for note in diagnosis.notes)
    assert [h.location.line for h in diagnosis.help] == [outcome.line("USERS"), outcome.line("ITEMS")]
    assert all("sparse=False" in h.message and "SparseAdam" in h.message for h in diagnosis.help)
    fixed = program("True")
    for index in range(len(diagnosis.help)):
        outcome.source = fixed
        fixed = apply_help(outcome, index)
    assert "sparse=True" not in fixed
    result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, program("False"), "reference.py")["result"]
    assert torch.equal(result["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(result["params"], reference["params"]))


def test_the_flag_passed_as_a_variable_gets_advice_only(tmp_path):
    source = program("SPARSE_FLAG").replace("torch.manual_seed(0)", "torch.manual_seed(0)\nSPARSE_FLAG = True")
    outcome = run_as_script(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD173"]
    assert [h.replacement for h in diagnosis.help] == [None]
    assert "sparse=False" in diagnosis.help[0].message


def test_sparse_embeddings_trained_with_sgd_are_silent(tmp_path):
    outcome = run_program(tmp_path, program("True", "torch.optim.SGD(model.parameters(), lr=0.1)"))
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []


def test_dense_embeddings_trained_with_adam_are_silent(tmp_path):
    outcome = run_program(tmp_path, program("False"))
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []


SGD_WITH_WEIGHT_DECAY = "torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-3)"


def test_sgd_weight_decay_on_sparse_embedding_gradients_names_the_constructions_and_the_change_trains_densely(
        tmp_path):
    # The add that fails is SGD's own (`grad.add(param, alpha=weight_decay)` in torch/optim/sgd.py):
    # the user's line is the step, and no `.grad` is on it.
    outcome = run_as_script(tmp_path, program("True", SGD_WITH_WEIGHT_DECAY))
    assert "add(sparse, dense) is not supported" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD173"]
    assert diagnosis.primary.line == outcome.line("USERS")
    assert {location.line for location in diagnosis.related} == {outcome.line("STEP"), outcome.line("ITEMS")}
    assert any("weight_decay=0.001" in note and "model.users" not in note for note in diagnosis.notes)
    assert all("sparse=False" in h.message and "weight_decay=0" in h.message for h in diagnosis.help)
    fixed = program("True", SGD_WITH_WEIGHT_DECAY)
    for index in range(len(diagnosis.help)):
        outcome.source = fixed
        fixed = apply_help(outcome, index)
    assert "sparse=True" not in fixed
    result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference = run_plain(tmp_path, program("False", SGD_WITH_WEIGHT_DECAY), "reference.py")["result"]
    assert torch.equal(result["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(result["params"], reference["params"]))


def test_a_users_own_sparse_add_keeps_its_ad152_diagnosis(tmp_path):
    # `p.grad + noise` on the user's line stays AD152 (the operand made dense there), not AD173.
    source = program("True", "torch.optim.SGD(model.parameters(), lr=0.1)").replace(
        "    optimizer.step()  # STEP", "    for p in model.parameters():\n        p.grad = p.grad + 0.01  # NOISE\n"
        "    optimizer.step()  # STEP")
    outcome = run_as_script(tmp_path, source)
    assert "add(sparse, dense) is not supported" in str(outcome.error)
    assert [d.code for d in outcome.diagnoses] == ["AD152"]
    assert outcome.diagnoses[0].primary.line == outcome.line("NOISE")
