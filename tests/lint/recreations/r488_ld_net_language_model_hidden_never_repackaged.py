"""LD-Net's language-model training carries each RNN layer's hidden state
from one batch to the next (the corpus is one long sequence) and calls
`repackage_hidden` on it at the start of every batch; asked why, the author
answers that the backward fails otherwise.  Without the detach the layer's
`self.hidden_state` of the second batch still belongs to the first batch's
graph, freed by the first `loss.backward()`, and the second backward raises
"Trying to backward through the graph a second time".
Buggy line: `LMTrainer.train_epoch` never calls `self.lm_model.repackage_hidden()`.
Source: https://github.com/LiyuanLucasLiu/LD-Net/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicRNN(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.layer = nn.LSTM(input_dim, hidden_dim)
        self.hidden_dim = hidden_dim
        self.hidden_state = None

    def init_hidden(self):
        self.hidden_state = None

    def repackage_hidden(self):
        if self.hidden_state is not None:
            self.hidden_state = tuple(h.detach() for h in self.hidden_state)

    def forward(self, x):
        out, self.hidden_state = self.layer(x, self.hidden_state)
        return out


class LM(nn.Module):
    def __init__(self, vocab=12, emb=6, hid=8):
        super().__init__()
        self.word_embed = nn.Embedding(vocab, emb)
        self.rnn = BasicRNN(emb, hid)
        self.decode = nn.Linear(hid, vocab)

    def init_hidden(self):
        self.rnn.init_hidden()

    def repackage_hidden(self):
        self.rnn.repackage_hidden()

    def forward(self, w_in):
        return self.decode(self.rnn(self.word_embed(w_in)))


class LMTrainer:
    def __init__(self, lm_model, lr=0.1, clip=5.0):
        self.lm_model = lm_model
        self.optimizer = torch.optim.SGD(lm_model.parameters(), lr=lr)
        self.clip = clip

    def train_epoch(self, dataset):
        self.lm_model.train()
        self.lm_model.init_hidden()
        total = 0.0
        for w_in, w_out in dataset:
            self.lm_model.zero_grad()
            scores = self.lm_model(w_in)
            loss = F.cross_entropy(scores.view(-1, scores.size(-1)), w_out.view(-1))
            loss.backward()  # expect: ADL019
            nn.utils.clip_grad_norm_(self.lm_model.parameters(), self.clip)
            self.optimizer.step()
            total += loss.item()
        return total


def run():
    torch.manual_seed(0)
    stream = torch.randint(0, 12, (13, 2))
    dataset = [(stream[i:i + 4], stream[i + 1:i + 5]) for i in range(0, 8, 4)]
    LMTrainer(LM()).train_epoch(dataset)
