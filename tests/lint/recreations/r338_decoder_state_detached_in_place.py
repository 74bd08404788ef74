"""OpenNMT-py truncates backpropagation through time by detaching the decoder
state between target chunks: `DecoderState.detach()` called `h.detach_()` on
every tensor of the state.  The input feed is the last decoder output,
`outputs[-1].unsqueeze(0)`, a view; with PyTorch 0.4 `detach_()` on a view
fails ("Can't detach views in-place. Use detach() instead").  The fix
re-binds detached copies: `self.hidden = tuple(h.detach() for h in
self.hidden)`.
Buggy line: `h.detach_()` in `DecoderState.detach`.
Expected finding: an in-place detach of a view (no rule yet).
Source: https://github.com/OpenNMT/OpenNMT-py/issues/403"""
import torch
import torch.nn as nn


class RNNDecoderState:
    def __init__(self, hidden, input_feed):
        self.hidden = hidden
        self.input_feed = input_feed

    @property
    def _all(self):
        return self.hidden + (self.input_feed,)

    def update_state(self, hidden, input_feed):
        self.hidden = hidden
        self.input_feed = input_feed

    def detach(self):
        for h in self._all:
            if h is not None:
                h.detach_()  # missed: none


class InputFeedDecoder(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.rnn = nn.GRUCell(2 * dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, tgt, state):
        hidden, input_feed = state.hidden[0], state.input_feed.squeeze(0)
        outputs = []
        for emb in tgt.split(1):
            hidden = self.rnn(torch.cat([emb.squeeze(0), input_feed], 1), hidden)
            input_feed = torch.tanh(self.out(hidden))
            outputs.append(input_feed)
        outputs = torch.stack(outputs)
        state.update_state((hidden,), outputs[-1].unsqueeze(0))
        return outputs


def run():
    torch.manual_seed(0)
    decoder = InputFeedDecoder()
    optimizer = torch.optim.SGD(decoder.parameters(), lr=0.1)
    state = RNNDecoderState((torch.zeros(2, 4),), torch.zeros(1, 2, 4))
    target = torch.randn(6, 2, 4)
    for chunk in target.split(3):
        outputs = decoder(chunk, state)
        loss = outputs.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        state.detach()
