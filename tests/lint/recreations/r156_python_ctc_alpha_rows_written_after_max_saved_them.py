"""A pure-Python CTC loss (written to experiment with CTC variants): the
forward variables are kept in one preallocated tensor, and each time step
writes its row in place, `log_alpha[t, :, 2:] = log_probs_[t] +
logadd(log_alpha[t - 1, :, 2:], log_alpha[t - 1, :, 1:-1], ...)`.  With the
hand-written `logadd` (`torch.max` of its arguments, then `exp`/`log`), the
`max` keeps its inputs, which are slices of `log_alpha`; the next step's
write changes `log_alpha`, so `torch.autograd.grad` fails ("output 0 of
SliceBackward, is at version 17; expected version 16").  With
`torch.logsumexp(torch.stack(...))` the stack copies and it works, which is
what puzzled the reporter.
Source: https://github.com/pytorch/pytorch/issues/31819"""
import torch
import torch.nn.functional as F


def logadd(x0, x1, x2):
    m = torch.max(torch.max(x0, x1), x2)
    m = m.masked_fill(m == float('-inf'), 0)
    res = (x0 - m).exp() + (x1 - m).exp() + (x2 - m).exp()
    return res.log().add(m)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0):
    B = torch.arange(len(targets))
    targets_ = torch.cat([targets, targets[:, :1]], dim=-1)
    targets_ = torch.stack([torch.full_like(targets_, blank), targets_], dim=-1).flatten(start_dim=-2)
    diff_labels = torch.cat([torch.as_tensor([[False, False]]).expand(len(B), -1),
                             targets_[:, 2:] != targets_[:, :-2]], dim=1)
    zero, zero_padding = torch.tensor(float('-inf'), dtype=log_probs.dtype), 2
    log_probs_ = log_probs.gather(-1, targets_.expand(len(log_probs), -1, -1))
    log_alpha = torch.full((len(log_probs), len(B), zero_padding + targets_.shape[-1]), zero, dtype=log_probs.dtype)
    log_alpha[0, :, zero_padding + 0] = log_probs[0, :, blank]
    log_alpha[0, :, zero_padding + 1] = log_probs[0, B, targets_[:, 1]]
    for t in range(1, len(log_probs)):
        log_alpha[t, :, 2:] = log_probs_[t] + logadd(  # missed: ADL001
            log_alpha[t - 1, :, 2:], log_alpha[t - 1, :, 1:-1],
            torch.where(diff_labels, log_alpha[t - 1, :, :-2], zero))
    l1l2 = log_alpha[input_lengths - 1, B].gather(
        -1, torch.stack([zero_padding + target_lengths * 2 - 1, zero_padding + target_lengths * 2], dim=-1))
    return -torch.logsumexp(l1l2, dim=-1)


def run():
    torch.manual_seed(0)
    T, N, C, S = 6, 2, 4, 2
    logits = torch.randn(T, N, C, requires_grad=True)
    log_probs = F.log_softmax(logits, dim=-1)
    targets = torch.randint(1, C, (N, S))
    input_lengths = torch.full((N,), T, dtype=torch.long)
    target_lengths = torch.full((N,), S, dtype=torch.long)
    custom_ctc = ctc_loss(log_probs, targets, input_lengths, target_lengths)
    custom_ctc_grad, = torch.autograd.grad(custom_ctc.sum(), logits, retain_graph=True)
