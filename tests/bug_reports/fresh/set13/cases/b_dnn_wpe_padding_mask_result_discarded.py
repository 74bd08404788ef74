"""ESPnet's DNN-WPE speech-enhancement front end (`espnet/nets/pytorch_backend/frontends/dnn_wpe.py`):
a BLSTM estimates a time-frequency mask, the masked power weights one iteration of weighted
prediction error (WPE) dereverberation, and the padded frames of the dereverberated signal are to be
zeroed with `enhanced.masked_fill(make_pad_mask(ilens, enhanced.real), 0)`. `masked_fill` is the
out-of-place form and its result is thrown away, so the padded frames keep the filter's output;
the loss, computed over the padded batch, sees them and trains the mask estimator on them (no
error, no warning).
Source: https://github.com/espnet/espnet/issues/1272 ("at the end of `dnn_wpe.py`, a non-inplace
operation is used without using the returned value. Should `masked_fill` be replaced with
`masked_fill_`?"), fixed in https://github.com/espnet/espnet/pull/1273.
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

BATCH, FREQ, FRAMES, TAPS, DELAY, UNITS = 2, 4, 16, 2, 1, 8


def make_pad_mask(lengths, like):
    frames = torch.arange(like.shape[-1])
    mask = frames[None, :] >= lengths[:, None]  # (B, T)
    return mask[:, None, :].expand_as(like)


class MaskEstimator(nn.Module):
    def __init__(self):
        super().__init__()
        self.blstm = nn.LSTM(FREQ, UNITS, batch_first=True, bidirectional=True)
        self.linear = nn.Linear(2 * UNITS, FREQ)

    def forward(self, power):
        # power: (B, F, T) -> mask: (B, F, T)
        h, _ = self.blstm(power.transpose(1, 2))
        return torch.sigmoid(self.linear(h)).transpose(1, 2)


def wpe_one_iteration(data, power, taps, delay):
    # data, power: (B, F, T); real-valued single-channel WPE with inverse-power weights
    frames = data.shape[-1]
    padded = nn.functional.pad(data, (taps + delay - 1, 0))
    stacked = torch.stack([padded[..., k:k + frames] for k in range(taps)], dim=-2)  # (B, F, K, T)
    weights = 1.0 / power.clamp(min=1e-6)
    correlation = torch.einsum("bfkt,bflt,bft->bfkl", stacked, stacked, weights)
    correlation = correlation + 1e-3 * torch.eye(taps)
    cross = torch.einsum("bfkt,bft,bft->bfk", stacked, data, weights)
    filters = torch.linalg.solve(correlation, cross)
    return data - torch.einsum("bfk,bfkt->bft", filters, stacked)


class DNN_WPE(nn.Module):
    def __init__(self, taps=TAPS, delay=DELAY, iterations=1):
        super().__init__()
        self.taps, self.delay, self.iterations = taps, delay, iterations
        self.mask_est = MaskEstimator()

    def forward(self, data, ilens):
        enhanced = data
        mask = None
        for i in range(self.iterations):
            power = enhanced ** 2
            if i == 0:
                mask = self.mask_est(power)
                power = power * mask
            enhanced = wpe_one_iteration(data.contiguous(), power, taps=self.taps, delay=self.delay)
            enhanced.masked_fill(make_pad_mask(ilens, enhanced), 0)
        return enhanced, ilens, mask


ilens = torch.tensor([FRAMES, 11])
clean = torch.randn(BATCH, FREQ, FRAMES)
reverberant = clean + 0.6 * nn.functional.pad(clean, (2, 0))[..., :FRAMES]
for b, length in enumerate(ilens):
    clean[b, :, length:] = 0
    reverberant[b, :, length:] = 0.3 * torch.randn(FREQ, FRAMES - length)  # padding of the batch

frontend = DNN_WPE()
optimizer = torch.optim.Adam(frontend.parameters(), lr=1e-2)
losses = []
for step in range(4):
    optimizer.zero_grad()
    enhanced, _, _ = frontend(reverberant, ilens)
    loss = ((enhanced - clean) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in frontend.parameters()]}
