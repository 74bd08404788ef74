"""AD103 where a loop-carried state brings the previous iteration's graph into this one and
`retain_graph=True` kept that graph: the backward() line is the primary location, the carried
name's assignment is shown, and the help detaches it after the backward() and drops `retain_graph=True` (analysis/retained_carried_state.py).

Held-out set 47's Flashback_code#2 (a POI RNN's hidden state) gave advice only. Two shapes written
before the change ran on them: an LSTM's `(h, c)` carried in a training function, and a GRU
language model whose hidden state is carried by a `for` loop over batches. Near twins: the same loop
with the state detached runs and is silent, and a graph made once before the loop (nothing carried)
keeps AD103's other helps.

The state may also be an attribute of an object the loop uses: held-out set 46's LtC-MSDA#3 keeps
per-domain prototypes in `self.mean` and their affinities in `self.adj`, stored by a method the
loop calls (advice only at 7f3e9acb). Two shapes written before the change ran on them: a center
loss whose centers a trainer's method refreshes after the loss is built, and a module keeping a
running memory in its forward(). Near twins: the detached versions run silent, and a loop whose
failing graph also goes through a context made before the loop (which no detach at the iteration
boundary cuts) does not get the help."""

import os

import torch

from helpers import Outcome, apply_help, marked_line, run_plain, run_program

FRESH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "bug_reports", "fresh")
SET46, SET47 = os.path.join(FRESH, "set46"), os.path.join(FRESH, "set47")

LSTM_PAIR = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6)
        self.head = nn.Linear(6, 2)

    def forward(self, x, state):
        out, state = self.lstm(x, state)
        return self.head(out), state


def train(model, chunks, optimizer):
    state = (torch.zeros(1, 2, 6), torch.zeros(1, 2, 6))
    losses = []
    for x, y in chunks:
        optimizer.zero_grad()
        scores, state = model(x, state)  # CARRIED
        loss = nn.functional.cross_entropy(scores.view(-1, 2), y.view(-1))
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


model = Tagger()
chunks = [(torch.randn(4, 2, 3), torch.randint(0, 2, (4, 2))) for _ in range(3)]
losses = train(model, chunks, torch.optim.SGD(model.parameters(), lr=0.1))
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
"""
LSTM_PAIR_ANSWER = LSTM_PAIR.replace(
    "        loss.backward(retain_graph=True)\n",
    "        loss.backward()\n        state = tuple(s.detach() for s in state)\n")

GRU_LM = """
import torch
import torch.nn as nn

torch.manual_seed(0)
embed, gru, decoder = nn.Embedding(12, 5), nn.GRU(5, 7, batch_first=True), nn.Linear(7, 12)
params = list(embed.parameters()) + list(gru.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=0.01)
hidden = torch.zeros(1, 3, 7)
losses = []
for batch in torch.randint(0, 12, (4, 3, 6)):
    output, hidden = gru(embed(batch[:, :-1]), hidden)  # CARRIED
    loss = nn.functional.cross_entropy(decoder(output).reshape(-1, 12), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in params]}
"""
GRU_LM_ANSWER = GRU_LM.replace("    loss.backward(retain_graph=True)\n",
                               "    loss.backward()\n    hidden = hidden.detach()\n")

CONTEXT_BEFORE_LOOP = """
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder, head = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4)), nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
context = torch.tanh(encoder(torch.randn(2, 4)))
for step in range(3):
    loss = head(context).pow(2).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
"""

CENTER_LOSS = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CenterLossTrainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 4))
        self.classifier = nn.Linear(4, 3)
        self.optimizer = torch.optim.SGD(list(self.net.parameters()) + list(self.classifier.parameters()), lr=0.1)
        self.centers = torch.zeros(3, 4)

    def refresh_centers(self, feats, labels):
        onehot = F.one_hot(labels, 3).float()
        batch_centers = onehot.t() @ feats / (onehot.sum(0).unsqueeze(1) + 1e-6)
        self.centers = 0.9 * self.centers.detach() + 0.1 * batch_centers  # CARRIED

    def fit(self, batches):
        losses = []
        for x, y in batches:
            feats = self.net(x)
            pull = ((feats - self.centers[y]) ** 2).sum(1).mean()
            loss = F.cross_entropy(self.classifier(feats), y) + 0.1 * pull
            self.refresh_centers(feats, y)
            self.optimizer.zero_grad()
            loss.backward(retain_graph=True)
            self.optimizer.step()
            losses.append(loss.item())
        return losses


trainer = CenterLossTrainer()
batches = [(torch.randn(6, 5), torch.arange(6) % 3) for _ in range(3)]
losses = trainer.fit(batches)
result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in trainer.net.parameters()]}
"""
CENTER_LOSS_ANSWER = CENTER_LOSS.replace(
    "            loss.backward(retain_graph=True)\n",
    "            loss.backward()\n            self.centers = self.centers.detach()\n")

RUNNING_MEMORY = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class MemoryEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 4))
        self.memory = torch.zeros(4)

    def forward(self, x):
        h = torch.tanh(self.proj(x) + self.memory)
        self.memory = 0.5 * self.memory.detach() + 0.5 * h.mean(0)  # CARRIED
        return h


encoder, head = MemoryEncoder(), nn.Linear(4, 1)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=0.01)
losses = []
for x in torch.randn(4, 3, 4):
    loss = head(encoder(x)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in encoder.parameters()]}
"""
RUNNING_MEMORY_ANSWER = RUNNING_MEMORY.replace(
    "    loss.backward(retain_graph=True)\n",
    "    loss.backward()\n    encoder.memory = encoder.memory.detach()\n")

# The same memory, and also a context made once before the loop: the failing graph reaches the old
# weights through the context too, so detaching the memory would not be enough.
MEMORY_AND_CONTEXT_BEFORE_LOOP = RUNNING_MEMORY.replace(
    "losses = []\n", "context = encoder.proj(torch.randn(3, 4))\nlosses = []\n").replace(
    "loss = head(encoder(x)).pow(2).mean()", "loss = head(encoder(x) + context).pow(2).mean()")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as stream:
        return stream.read()


def _ad103(outcome: Outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD103")


def _same(a: dict, b: dict) -> bool:
    return _equal(a["result"], b["result"])


def _equal(a, b) -> bool:
    """Bitwise equal results: tensors, and dicts, lists and tuples of them."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def _help_applied(tmp_path, outcome: Outcome) -> dict:
    diagnosis = _ad103(outcome)
    fixed = apply_help(Outcome(outcome.error, [diagnosis], outcome.namespace, outcome.path, outcome.source))
    return run_plain(tmp_path, fixed)


def test_the_set47_poi_rnn_names_the_carried_state_and_its_help_is_the_accepted_change(tmp_path):
    case = _read(os.path.join(SET47, "cases", "poi_rnn_hidden_state_carried_with_retain_graph.py"))
    outcome = run_program(tmp_path, case)
    diagnosis = _ad103(outcome)
    assert diagnosis.primary.source == "loss.backward(retain_graph=True)"
    assert any(location.source == "out, h = model(x, t, s, h, active_users)" for location in diagnosis.related)
    assert diagnosis.help[0].message.startswith("detach h at the iteration boundary, and drop retain_graph=True")
    assert diagnosis.help[0].replacement == "loss.backward()\nh = h.detach()"
    answer = _read(os.path.join(SET47, "correct", "poi_rnn_hidden_state_carried_with_retain_graph.py"))
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, answer, "answer.py"))


def test_an_lstm_pair_carried_in_a_training_function(tmp_path):
    outcome = run_program(tmp_path, LSTM_PAIR)
    diagnosis = _ad103(outcome)
    assert diagnosis.primary.source == "loss.backward(retain_graph=True)"
    assert any(location.line == marked_line(LSTM_PAIR, "CARRIED") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "loss.backward()\nstate = tuple(s.detach() for s in state)"
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, LSTM_PAIR_ANSWER, "answer.py"))


def test_a_gru_language_model_carrying_its_hidden_state(tmp_path):
    outcome = run_program(tmp_path, GRU_LM)
    diagnosis = _ad103(outcome)
    assert diagnosis.primary.source == "loss.backward(retain_graph=True)"
    assert any(location.line == marked_line(GRU_LM, "CARRIED") for location in diagnosis.related)
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, GRU_LM_ANSWER, "answer.py"))


def test_the_detached_versions_run_silent(tmp_path):
    for source in (LSTM_PAIR_ANSWER, GRU_LM_ANSWER,
                   GRU_LM.replace("    optimizer.step()\n", "    optimizer.step()\n    hidden = hidden.detach()\n")):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses


def test_a_graph_made_before_the_loop_is_not_taken_for_a_carried_state(tmp_path):
    outcome = run_program(tmp_path, CONTEXT_BEFORE_LOOP)
    assert outcome.error is not None and outcome.diagnoses
    assert not any("iteration boundary" in help.message for d in outcome.diagnoses for help in d.help)


def test_the_set46_prototypes_kept_on_the_solver_get_both_attributes_detached(tmp_path):
    name = "domain_prototypes_kept_with_graph_across_iterations.py"
    outcome = run_program(tmp_path, _read(os.path.join(SET46, "cases", name)))
    diagnosis = _ad103(outcome)
    assert diagnosis.primary.source == "loss.backward(retain_graph=True)"
    assert any(location.source.startswith("self.mean = self.mean.detach() * (1 - curr_mask)")
               for location in diagnosis.related)
    assert diagnosis.help[0].message.startswith("detach self.mean and self.adj at the iteration boundary")
    assert diagnosis.help[0].replacement == \
        "loss.backward()\nself.mean = self.mean.detach()\nself.adj = self.adj.detach()"
    answer = _read(os.path.join(SET46, "correct", name))
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, answer, "answer.py"))


def test_centers_a_trainer_method_refreshes_after_the_loss(tmp_path):
    outcome = run_program(tmp_path, CENTER_LOSS)
    diagnosis = _ad103(outcome)
    assert any(location.line == marked_line(CENTER_LOSS, "CARRIED") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "loss.backward()\nself.centers = self.centers.detach()"
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, CENTER_LOSS_ANSWER, "answer.py"))


def test_a_running_memory_a_module_keeps_in_its_forward(tmp_path):
    outcome = run_program(tmp_path, RUNNING_MEMORY)
    diagnosis = _ad103(outcome)
    assert any(location.line == marked_line(RUNNING_MEMORY, "CARRIED") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "loss.backward()\nencoder.memory = encoder.memory.detach()"
    assert _same(_help_applied(tmp_path, outcome), run_plain(tmp_path, RUNNING_MEMORY_ANSWER, "answer.py"))


def test_detached_attributes_run_silent_and_a_second_way_into_the_old_graph_gets_no_cut(tmp_path):
    for source in (CENTER_LOSS_ANSWER, RUNNING_MEMORY_ANSWER):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses
    outcome = run_program(tmp_path, MEMORY_AND_CONTEXT_BEFORE_LOOP)
    assert outcome.error is not None and outcome.diagnoses
    assert not any("iteration boundary" in help.message for d in outcome.diagnoses for help in d.help)
