"""Controlled text generation (Hu et al.) re-implemented in PyTorch: the
decoder is fed its own soft output word by word, and the loop decides
whether to start from the BOS word with `if 'next_word' in locals():`.
`next_word` survives the batch loop, so from the second batch on the first
decoder input is the previous batch's last soft word, which still carries
the previous batch's graph; `total_vae_loss.backward()` then goes back into
the graph the previous backward freed ("Trying to backward through the
graph a second time, but the buffers have already been freed").
Buggy line: `word = next_word.squeeze(1)` (a value from the previous batch).
Expected finding: ADL019 at `total_vae_loss.backward()`.
Source: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/8"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

max_features = 6
maxlen = 4
batch_size = 2
BOS = 1


class Decoder(nn.Module):
    def __init__(self, emb_dim=5, hidden=8):
        super().__init__()
        self.emb = nn.Linear(max_features, emb_dim, bias=False)
        self.lstm = nn.LSTMCell(emb_dim, hidden)
        self.out = nn.Linear(hidden, max_features)

    def forward(self, one_hot_word, hidden, temperature=0.5):
        h, c = self.lstm(self.emb(one_hot_word), hidden)
        pre_soft = self.out(h)
        return F.softmax(pre_soft / temperature, dim=-1), (h, c), pre_soft


def train_vae(decoder, batches, epochs=1):
    opt = torch.optim.Adam(decoder.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch_index in range(epochs):
        for batch, input_data in enumerate(batches):
            decoder.zero_grad()
            vae_loss = 0
            hidden = (torch.zeros(batch_size, 8), torch.zeros(batch_size, 8))
            batch_init_word = np.zeros((batch_size, max_features))
            batch_init_word[np.arange(batch_size), BOS] = 1
            batch_init_word = torch.from_numpy(batch_init_word).float()
            input_data = input_data.permute(1, 0)
            for index in range(maxlen - 1):
                if 'next_word' in locals():
                    word = next_word.squeeze(1)
                else:
                    word = batch_init_word
                output, hidden, pre_soft = decoder(word, hidden)
                next_word = output.unsqueeze(1)
                vae_loss += criterion(pre_soft, input_data[index + 1])
            total_vae_loss = vae_loss
            total_vae_loss.backward()  # missed: ADL019
            opt.step()


def run():
    torch.manual_seed(0)
    batches = [torch.randint(0, max_features, (batch_size, maxlen)) for _ in range(2)]
    train_vae(Decoder(), batches)
