"""AD164: a submodule built in `__init__`, held by the optimizer, that no code of its file ever reads
(set 16's ProteinMPNN encoder: `out_v` built, `out_e` called where `out_v` belonged). Its
parameters never get a gradient and never change. Two programs of the same cause in other shapes
(written before the check was): an attention block whose `key_proj` is never read (`query_proj`
computes both queries and keys), and an audio U-Net whose `up_norm` is never read (`down_norm` is
applied on both paths). Which call of the twin was meant is not known at run time: the help is
advice, the line named is the construction and the twin's calls are shown."""

from __future__ import annotations

from helpers import run_program

ATTENTION = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Attention(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.query_proj = nn.Linear(width, width)
            self.key_proj = nn.Linear(width, width)  # BUILT
            self.value_proj = nn.Linear(width, width)

        def forward(self, tokens):
            queries = self.query_proj(tokens)
            keys = self.query_proj(tokens)  # TWIN
            weights = torch.softmax(queries @ keys.transpose(-1, -2) / tokens.shape[-1] ** 0.5, dim=-1)
            return weights @ self.value_proj(tokens)


    model = nn.Sequential(nn.Embedding(20, 8), Attention(8), nn.Flatten(), nn.Linear(8 * 5, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    words, labels = torch.randint(0, 20, (6, 5)), torch.randint(0, 2, (6,))
    for step in range(3):
        loss = nn.functional.cross_entropy(model(words), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # STEP
"""

AUDIO_UNET = """
    import torch
    from torch import nn

    torch.manual_seed(2)


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Conv1d(4, 4, 3, padding=1)
            self.up = nn.Conv1d(4, 4, 3, padding=1)
            self.down_norm = nn.GroupNorm(2, 4)
            self.up_norm = nn.GroupNorm(2, 4)  # BUILT

        def forward(self, signal):
            skip = self.down_norm(self.down(signal)).relu()
            return self.down_norm(self.up(skip)).relu() + signal  # TWIN


    def train(net, optimizer, noisy, clean):
        for epoch in range(3):
            loss = (net(noisy) - clean).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    net = nn.Sequential(Block(), Block())
    noisy = torch.randn(3, 4, 16)
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), noisy, noisy * 0.5)
"""

# Used only in evaluation: read by the code, so not "never used" (it is silent).
EVALUATION_HEAD = ATTENTION.replace(
    "            return weights @ self.value_proj(tokens)\n",
    "            if not self.training:\n                return weights @ self.key_proj(tokens)\n"
    "            return weights @ self.value_proj(tokens)\n")

# A leftover head with no twin called in its place (the keys are the tokens themselves): not this
# mistake (set 5's Meta-Weight-Net correct program keeps such an auxiliary head), silent.
LEFTOVER_HEAD = ATTENTION.replace("keys = self.query_proj(tokens)  # TWIN", "keys = tokens")

# The intended attention: keys from key_proj.
ATTENTION_INTENDED = ATTENTION.replace("keys = self.query_proj(tokens)  # TWIN", "keys = self.key_proj(tokens)")


def test_the_unread_key_projection_is_named_with_its_twins_calls(tmp_path):
    outcome = run_program(tmp_path, ATTENTION)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD164"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    related = [location.line for location in diagnosis.related]
    assert outcome.line("TWIN") in related and outcome.line("STEP") in related
    assert "key_proj" in diagnosis.title or "key_proj" in diagnosis.primary.note
    assert "query_proj" in " ".join(diagnosis.notes)
    assert all(not suggestion.replacement for suggestion in diagnosis.help)  # advice: which call was meant is unknown


def test_the_unread_norm_is_named_once_for_both_blocks(tmp_path):
    outcome = run_program(tmp_path, AUDIO_UNET)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD164"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert outcome.line("TWIN") in [location.line for location in diagnosis.related]
    assert "down_norm" in " ".join(diagnosis.notes)


def test_a_head_read_only_in_evaluation_is_silent(tmp_path):
    outcome = run_program(tmp_path, EVALUATION_HEAD)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD164"]


def test_a_leftover_head_without_a_twin_in_its_place_is_silent(tmp_path):
    outcome = run_program(tmp_path, LEFTOVER_HEAD)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD164"]


def test_the_intended_version_is_silent(tmp_path):
    outcome = run_program(tmp_path, ATTENTION_INTENDED)
    assert outcome.error is None
    assert not outcome.diagnoses
