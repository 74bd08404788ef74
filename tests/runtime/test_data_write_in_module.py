"""AD301 at a write through `.data` inside the module the loss goes through: `x.data[...] = y`
copies values behind autograd's back, so what `y` was computed from gets no gradient through the
copy. When that module is the only trained part, the loss has no grad_fn and backward() raises.
The cut statement is the call of the model (its inputs carry gradients, its result does not); the
report names the `.data` write in the forward and the help writes through the tensors themselves,
which trains as the answer does (held-out set 12, Qwen-VL#124's image features written into the
token embeddings)."""

import torch

from helpers import apply_help, run_plain, run_program

CAPTIONER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_encoder = nn.Linear(6, 8)
        self.word_embeddings = nn.Embedding(20, 8)
        self.decoder = nn.Linear(8, 20)

    def forward(self, image, tokens):
        memory = self.word_embeddings(tokens)
        prefix = torch.tanh(self.image_encoder(image))
        memory.data[:, 0] = prefix.data  # WRITE
        return self.decoder(memory)

model = Captioner()
model.word_embeddings.requires_grad_(False)
model.decoder.requires_grad_(False)
optimizer = torch.optim.SGD(model.image_encoder.parameters(), lr=0.1)
image, tokens = torch.randn(4, 6), torch.randint(0, 20, (4, 5))
for step in range(3):
    logits = model(image, tokens)  # CALL
    loss = F.cross_entropy(logits.reshape(-1, 20), tokens.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in model.image_encoder.parameters()]
"""

ANSWER = CAPTIONER.replace("memory.data[:, 0] = prefix.data  # WRITE", "memory[:, 0] = prefix")


def test_the_data_write_in_the_forward_is_named_with_a_recorded_write_as_the_help(tmp_path):
    outcome = run_program(tmp_path, CAPTIONER)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert "a write through `.data` is not recorded" in diagnosis.primary.note
    assert any(loc.line == outcome.line("CALL") and "Captioner.forward writes through .data" in loc.note
               for loc in diagnosis.related)
    assert diagnosis.help[0].replacement.strip() == "memory[:, 0] = prefix"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, CAPTIONER)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert not all(torch.equal(a, b) for a, b in zip(fixed, run_plain(
        tmp_path, ANSWER.replace("for step in range(3):", "for step in range(0):"), name="untrained.py")["params"]))


def test_the_answer_runs_without_a_diagnosis(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not outcome.diagnoses
