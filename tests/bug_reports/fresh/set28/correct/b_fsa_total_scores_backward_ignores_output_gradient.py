"""Sequence-discriminative (MMI-style) training of a small acoustic model with a
finite-state-acceptor library. The network scores the arcs of a numerator graph (the transcript)
and of a denominator graph (all competing sequences); each graph's total score is the log-sum
over its arcs, computed by the library's custom autograd Function `get_tot_scores`, and the loss
is `-(num_tot - den_tot)`. The Function's backward returns the arc posteriors
`exp(arc_score - tot_score)`, the derivative of the total score, without multiplying it by the
gradient arriving at the output. The loss gives the numerator a gradient of -1 and the
denominator +1, so every arc gradient has the wrong sign: training runs without an error and
the loss goes up.
Source: https://github.com/k2-fsa/k2/issues/341 ("Backward of get_tot_scores ignores gradient":
"the backward of get_tot_scores needs to multiply by the gradient at the output. In our
training, this is causing us to get the sign of the update wrong!!!"; fixed by multiplying the
posteriors by `tot_scores_deriv[arc_to_fsa_idx]`)
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class _GetTotScoresFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, arc_to_fsa_idx, num_fsas, arc_scores):
        tot_scores = torch.full((num_fsas,), float("-inf"))
        tot_scores = tot_scores.scatter_reduce(0, arc_to_fsa_idx, arc_scores, reduce="amax")
        shifted = (arc_scores - tot_scores[arc_to_fsa_idx]).exp()
        sums = torch.zeros(num_fsas).index_add(0, arc_to_fsa_idx, shifted)
        tot_scores = tot_scores + sums.log()
        ctx.save_for_backward(arc_to_fsa_idx, arc_scores, tot_scores)
        return tot_scores

    @staticmethod
    def backward(ctx, tot_scores_grad):
        arc_to_fsa_idx, arc_scores, tot_scores = ctx.saved_tensors
        arc_post = (arc_scores - tot_scores[arc_to_fsa_idx]).exp()
        return None, None, arc_post * tot_scores_grad[arc_to_fsa_idx]


def get_tot_scores(arc_to_fsa_idx, num_fsas, arc_scores):
    return _GetTotScoresFunction.apply(arc_to_fsa_idx, num_fsas, arc_scores)


class AcousticModel(nn.Module):
    def __init__(self, n_feats=10, n_phones=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_feats, 32), nn.Tanh(), nn.Linear(32, n_phones))

    def forward(self, feats):
        return self.net(feats).log_softmax(-1)


def make_utterances(n_utts=4, frames=5, n_phones=6, n_feats=10):
    """Per utterance: frame features, the transcript's phone per frame (numerator arcs) and all
    phones per frame (denominator arcs)."""
    proto = torch.randn(n_phones, n_feats)
    utts = []
    for _ in range(n_utts):
        phones = torch.randint(0, n_phones, (frames,))
        feats = proto[phones] + 0.7 * torch.randn(frames, n_feats)
        utts.append((feats, phones))
    return utts


def build_graphs(utts, n_phones=6):
    num_fsa, num_frame, num_phone = [], [], []
    den_fsa, den_frame, den_phone = [], [], []
    offset = 0
    for u, (feats, phones) in enumerate(utts):
        for t in range(feats.size(0)):
            num_fsa.append(u)
            num_frame.append(offset + t)
            num_phone.append(int(phones[t]))
            for p in range(n_phones):
                den_fsa.append(u)
                den_frame.append(offset + t)
                den_phone.append(p)
        offset += feats.size(0)
    t = torch.tensor
    return (t(num_fsa), t(num_frame), t(num_phone)), (t(den_fsa), t(den_frame), t(den_phone))


utts = make_utterances()
all_feats = torch.cat([f for f, _ in utts])
(num_fsa, num_frame, num_phone), (den_fsa, den_frame, den_phone) = build_graphs(utts)

model = AcousticModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(25):
    log_probs = model(all_feats)
    num_arc_scores = log_probs[num_frame, num_phone]
    den_arc_scores = log_probs[den_frame, den_phone]
    num_tot = get_tot_scores(num_fsa, len(utts), num_arc_scores)
    den_tot = get_tot_scores(den_fsa, len(utts), den_arc_scores)
    loss = -(num_tot - den_tot).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
print("loss first/last", losses[0].item(), losses[-1].item())
