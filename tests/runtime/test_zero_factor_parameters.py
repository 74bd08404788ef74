"""AD161: two parameters of a module both start at zero and get exactly-zero gradients (set 15's
SAPT LoRA layer and catid/dora's DoRA layer were the held-out cases; the program below is another
of the same cause, a low-rank update of a frozen embedding). Named where the first factor is
created; the help is advice, since which factor to draw at random, and how, is the model's
choice. Usual LoRA (one factor random, one zero) and a zero-initialised convolution (a
ControlNet's) get gradients and stay silent."""

from __future__ import annotations

from helpers import run_program

LOW_RANK_EMBEDDING_UPDATE = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class LowRankEmbedding(nn.Module):
        def __init__(self, vocab, dim, rank):
            super().__init__()
            self.frozen = nn.Embedding(vocab, dim).requires_grad_(False)
            self.down = nn.Parameter(torch.zeros(vocab, rank))  # FIRST
            self.up = nn.Parameter(torch.zeros(rank, dim))  # SECOND

        def forward(self, ids):
            return self.frozen(ids) + F.embedding(ids, self.down @ self.up)


    embedding = LowRankEmbedding(10, 6, 2)
    head = nn.Linear(6, 2).requires_grad_(False)
    optimizer = torch.optim.AdamW([embedding.down, embedding.up], lr=0.05)
    ids, labels = torch.randint(0, 10, (8, 3)), torch.randint(0, 2, (8,))
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(head(embedding(ids).mean(1)), labels)
        loss.backward()
        optimizer.step()
"""


def test_the_first_zero_factor_is_named_with_the_second(tmp_path):
    outcome = run_program(tmp_path, LOW_RANK_EMBEDDING_UPDATE)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD161", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FIRST")
    assert outcome.line("SECOND") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement is None  # advice: the init is the model's choice
    assert "start one factor from random values" in diagnosis.help[0].message


def test_the_program_with_one_random_factor_says_nothing(tmp_path):
    fixed = LOW_RANK_EMBEDDING_UPDATE.replace("nn.Parameter(torch.zeros(vocab, rank))  # FIRST",
                                              "nn.Parameter(torch.randn(vocab, rank) / rank ** 0.5)  # FIRST")
    outcome = run_program(tmp_path, fixed)
    assert outcome.error is None
    assert outcome.diagnoses == []


def test_a_zero_initialised_convolution_gets_gradients_and_says_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        base = nn.Conv2d(3, 4, 3, padding=1).requires_grad_(False)
        control = nn.Conv2d(3, 4, 1)
        nn.init.zeros_(control.weight)
        nn.init.zeros_(control.bias)
        optimizer = torch.optim.SGD(control.parameters(), lr=0.1)
        x, target = torch.randn(2, 3, 5, 5), torch.randn(2, 4, 5, 5)
        for step in range(3):
            optimizer.zero_grad()
            loss = (base(x) + control(x) - target).pow(2).mean()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []
