"""Dynamic Fine-Tuning (DFT) loss in a supervised fine-tuning trainer (modelscope/twinkle): DFT
weights each target token's cross-entropy by that token's probability under a stop-gradient,
`-stop_gradient(p_y) * log(p_y)`. The loss was written `-(p * logp)` with `p = logp.exp()` not
detached, so backward also differentiates the weight: every token's gradient is multiplied by
`1 + log(p_y)`, which reverses its direction for each token with p_y < 1/e. The loss value is the
same either way; nothing is raised.
Source: https://github.com/modelscope/twinkle/pull/291 ("DFT requires a stop-gradient probability
weight ... Differentiating the weight instead multiplies the intended gradient by 1 + log(p_y),
reversing its direction when p_y < exp(-1). Detach the probability weight").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH, IGNORE_INDEX = 40, 16, 7, 3, -100


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.mix(self.embed(input_ids))))


def dft_loss(logits, labels):
    logits, labels = logits[:, :-1], labels[:, 1:]
    mask = labels != IGNORE_INDEX
    safe_labels = labels.masked_fill(~mask, 0)
    logp = F.log_softmax(logits.float(), dim=-1).gather(-1, safe_labels.unsqueeze(-1)).squeeze(-1)
    p = logp.exp().detach()
    per_token = -(p * logp)
    return (per_token * mask).sum() / mask.sum()


model = TinyCausalLM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
labels = input_ids.clone()
labels[:, :3] = IGNORE_INDEX  # the prompt's tokens are not trained on

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = dft_loss(model(input_ids), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
