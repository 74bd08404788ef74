"""Dive-into-DL-PyTorch 6.4 trains an RNN written from scratch; with adjacent
sampling the hidden state is initialised once per epoch and carried from one
minibatch to the next, and the book detaches it at the start of each
minibatch (`for s in state: s.detach_()`).  The issue explains that the
detach is not about cost: without it the state of the second minibatch is
still the output of the first minibatch's graph, already freed by its
`l.backward()`, and the second backward fails ("Trying to backward through
the graph a second time").  The re-creation is the loop without the detach.
Buggy line: the adjacent-sampling branch that keeps `state` without detaching it.
Source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/146"""
import torch
import torch.nn.functional as F


def get_params(num_inputs, num_hiddens, num_outputs):
    torch.manual_seed(0)

    def _one(shape):
        return torch.nn.Parameter(torch.randn(shape) * 0.01)

    return nn_params([_one((num_inputs, num_hiddens)), _one((num_hiddens, num_hiddens)),
                      torch.nn.Parameter(torch.zeros(num_hiddens)), _one((num_hiddens, num_outputs)),
                      torch.nn.Parameter(torch.zeros(num_outputs))])


def nn_params(params):
    return torch.nn.ParameterList(params)


def init_rnn_state(batch_size, num_hiddens):
    return (torch.zeros((batch_size, num_hiddens)),)


def rnn(inputs, state, params):
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    for X in inputs:
        H = torch.tanh(torch.matmul(X, W_xh) + torch.matmul(H, W_hh) + b_h)
        outputs.append(torch.matmul(H, W_hq) + b_q)
    return outputs, (H,)


def to_onehot(X, n_class):
    return [F.one_hot(X[:, i], n_class).float() for i in range(X.shape[1])]


def grad_clipping(params, theta):
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
    if norm > theta:
        for p in params:
            p.grad.mul_(theta / norm)


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad / batch_size


def train_and_predict_rnn(data_iter_fn, vocab_size, num_hiddens, num_epochs, lr, clipping_theta, batch_size):
    params = get_params(vocab_size, num_hiddens, vocab_size)
    for epoch in range(num_epochs):
        state = init_rnn_state(batch_size, num_hiddens)
        for X, Y in data_iter_fn():
            inputs = to_onehot(X, vocab_size)
            outputs, state = rnn(inputs, state, params)
            outputs = torch.cat(outputs, dim=0)
            y = torch.transpose(Y, 0, 1).contiguous().view(-1)
            l = F.cross_entropy(outputs, y.long())
            for p in params:
                if p.grad is not None:
                    p.grad.zero_()
            l.backward()  # expect: ADL019
            grad_clipping(params, clipping_theta)
            sgd(params, lr, 1)


def run():
    corpus = torch.randint(0, 7, (2, 13))

    def data_iter_consecutive():
        for i in range(0, 8, 4):
            yield corpus[:, i:i + 4], corpus[:, i + 1:i + 5]

    train_and_predict_rnn(data_iter_consecutive, 7, 8, 1, 1.0, 0.01, 2)
