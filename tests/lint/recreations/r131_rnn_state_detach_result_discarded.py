"""Language-model training with a recurrent state carried across minibatches
(a book's PyTorch port): the loop means to cut the state from the previous
minibatch's graph with `for s in state: s.detach()`, but `detach()` returns a
new tensor and the result is dropped.  The state keeps its graph, which
`backward(retain_graph=True)` does not free, and the next backward goes through
it after `optimizer.step()` changed the GRU's weights in place ("modified by an
inplace operation").
Source: https://github.com/dsgiitr/d2l-pytorch (d2l/train.py, train_and_predict_rnn_nn)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNModel(nn.Module):
    def __init__(self, rnn_layer, num_hiddens, vocab_size):
        super().__init__()
        self.rnn = rnn_layer
        self.vocab_size = vocab_size
        self.linear = nn.Linear(num_hiddens, vocab_size)

    def forward(self, inputs, state):
        X = F.one_hot(inputs.long().transpose(0, -1), self.vocab_size).to(torch.float32)
        Y, state = self.rnn(X, state)
        return self.linear(Y.reshape((-1, Y.shape[-1]))), state

    def begin_state(self, num_hiddens, batch_size=1):
        return torch.zeros(size=(1, batch_size, num_hiddens), dtype=torch.float32)


def train(model, num_hiddens, batches, lr, batch_size):
    loss = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    state = model.begin_state(num_hiddens=num_hiddens, batch_size=batch_size)
    for X, Y in batches:
        for s in state:
            s.detach()
        output, state = model(X, state)
        l = loss(output, Y.t().reshape((-1,)).long())
        optimizer.zero_grad()
        l.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003


def run():
    torch.manual_seed(0)
    vocab_size, num_hiddens, batch_size, num_steps = 12, 8, 2, 5
    model = RNNModel(nn.GRU(vocab_size, num_hiddens), num_hiddens, vocab_size)
    batches = [(torch.randint(0, vocab_size, (batch_size, num_steps)),
                torch.randint(0, vocab_size, (batch_size, num_steps))) for _ in range(3)]
    train(model, num_hiddens, batches, lr=0.5, batch_size=batch_size)
