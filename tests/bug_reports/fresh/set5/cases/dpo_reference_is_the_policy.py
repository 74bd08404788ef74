"""DPO fine-tuning for a vision-language model: no separate reference model is loaded
(`ref_model` is None), so the trainer computes the reference log-probabilities with the policy
itself; the reference moves with the policy, the log-ratio is always zero and the loss never
changes, and training loses its anchor (no error).
Source: https://github.com/YiyangZhou/POVID/issues/11 ("self.ref_model is None, so the ref model and
the policy model have the same parameters and keep being updated ... the loss would then stay
constant"; DPO needs a frozen copy of the initial policy as the reference).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, dim = 12, 8
policy = nn.Sequential(nn.Embedding(vocab, dim), nn.Tanh(), nn.Linear(dim, vocab))
ref_model = None
optimizer = torch.optim.SGD(policy.parameters(), lr=0.5)
beta = 0.1
chosen = torch.randint(0, vocab, (6, 5))
rejected = torch.randint(0, vocab, (6, 5))


def sequence_logps(model, ids):
    logits = model(ids[:, :-1])
    return F.log_softmax(logits, -1).gather(2, ids[:, 1:, None]).squeeze(2).sum(1)


losses = []
for step in range(6):
    policy_chosen, policy_rejected = sequence_logps(policy, chosen), sequence_logps(policy, rejected)
    with torch.no_grad():
        reference = policy if ref_model is None else ref_model
        ref_chosen, ref_rejected = sequence_logps(reference, chosen), sequence_logps(reference, rejected)
    logits = beta * ((policy_chosen - ref_chosen) - (policy_rejected - ref_rejected))
    loss = -F.logsigmoid(logits).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in policy.parameters()]}
