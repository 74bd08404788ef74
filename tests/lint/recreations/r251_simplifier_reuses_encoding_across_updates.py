"""A symbolic-expression simplifier (a tree encoder-decoder) enforces that
equivalent expressions embed close together and unequal ones far apart:
after a beam search, `train_step` encodes the input once
(`hidden_states = self.encode(sample)`) and calls `enforce_encoding` for
every unequal candidate with `encoded1=hidden_states`.  Each call builds a
contrastive loss from `hidden_states`, backpropagates (keeping the graph,
`retain_graph=True`, since `hidden_states` is shared) and steps the encoder's
optimizer; the second call's backward reaches the encoder graph of
`hidden_states` again, whose weights the first call's step changed in place
("one of the variables needed for gradient computation has been modified by
an inplace operation").  The fix re-encodes the input in each call (or
steps once after all the backward passes).
Buggy line: `self.optimizer.step()` in `enforce_encoding`, before the next
call's backward through the same `hidden_states`.
Expected finding: ADL003 there.
Source: https://github.com/shihui2010/symbolic_simplifier/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TreeEncoder(nn.Module):
    def __init__(self, vocab=10, dim=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)

    def forward(self, token_ids):
        h = torch.zeros(1, self.cell.hidden_size)
        for token in token_ids:
            h = self.cell(self.embedding(token.view(1)), h)
        return h


class EncoderDecoder(nn.Module):
    def __init__(self, vocab=10, dim=8, margin=1.0):
        super().__init__()
        self.encoder = TreeEncoder(vocab, dim)
        self.margin = margin
        self.optimizer = torch.optim.SGD(self.encoder.parameters(), lr=0.1)

    def encode(self, token_ids):
        return self.encoder(token_ids)

    def enforce_encoding(self, s2, encoded1, positive=True):
        self.optimizer.zero_grad()
        encoded2 = self.encode(s2)
        distance = F.pairwise_distance(encoded1, encoded2)
        if positive:
            loss = distance.pow(2).mean()
        else:
            loss = F.relu(self.margin - distance).pow(2).mean()
        loss.backward(retain_graph=True)
        self.optimizer.step()  # expect: ADL003
        return loss.item()

    def train_step(self, sample_input, equivalences, unequals):
        hidden_states = self.encode(sample_input)
        for eq in equivalences:
            self.enforce_encoding(eq.clone(), encoded1=hidden_states, positive=True)
        for ne in unequals:
            self.enforce_encoding(ne.clone(), encoded1=hidden_states, positive=False)


def run():
    torch.manual_seed(0)
    model = EncoderDecoder()
    sample = torch.tensor([1, 2, 3])
    model.train_step(sample, [torch.tensor([1, 3, 2])], [torch.tensor([4, 5]), torch.tensor([6, 7, 8])])
