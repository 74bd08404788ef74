"""lang2logic's seq2seq-with-attention training step allocates the buffer of
encoder outputs as `torch.zeros(..., requires_grad=True)` and then writes the
encoder's hidden state for each position into it, `enc_outputs[:, i, :] =
...`.  The buffer is a leaf that requires grad; writing into its view raises
"a view of a leaf Variable that requires grad is being used in an in-place
operation" (in 2018's PyTorch: "leaf variable has been moved into the graph
interior").  The fix allocates the buffer without `requires_grad=True` (the
writes give it its graph).
Buggy line: `enc_outputs[:, i, :] = enc_s[i + 1][2]` in `eval_training`.
Source: https://github.com/Alex-Fabbri/lang2logic-PyTorch/issues/1"""
import torch
import torch.nn as nn


class LSTM(nn.Module):
    def __init__(self, rnn_size):
        super().__init__()
        self.cell = nn.LSTMCell(rnn_size, rnn_size)

    def forward(self, x, prev_c, prev_h):
        next_h, next_c = self.cell(x, (prev_h, prev_c))
        return next_c, next_h


class EncoderRNN(nn.Module):
    def __init__(self, vocab, rnn_size):
        super().__init__()
        self.hidden_size = rnn_size
        self.embedding = nn.Embedding(vocab, rnn_size)
        self.lstm = LSTM(rnn_size)

    def forward(self, input_src, prev_c, prev_h):
        return self.lstm(self.embedding(input_src), prev_c, prev_h)


def eval_training(enc_batch, encoder, encoder_optimizer, batch_size=2, rnn_size=4):
    encoder_optimizer.zero_grad()
    enc_max_len = enc_batch.size(1)
    enc_outputs = torch.zeros((enc_batch.size(0), enc_max_len, encoder.hidden_size), requires_grad=True)
    enc_s = {}
    for j in range(enc_max_len + 1):
        enc_s[j] = {}
    for i in range(1, 3):
        enc_s[0][i] = torch.zeros((batch_size, rnn_size), dtype=torch.float, requires_grad=True)
    for i in range(enc_max_len):
        enc_s[i + 1][1], enc_s[i + 1][2] = encoder(enc_batch[:, i], enc_s[i][1], enc_s[i][2])
        enc_outputs[:, i, :] = enc_s[i + 1][2]  # expect: ADL014
    loss = enc_outputs.pow(2).mean()
    loss.backward()
    encoder_optimizer.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    encoder = EncoderRNN(10, 4)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    eval_training(torch.randint(0, 10, (2, 3)), encoder, optimizer)
