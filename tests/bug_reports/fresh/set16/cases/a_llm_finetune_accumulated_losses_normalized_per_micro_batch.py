"""Language-model fine-tuning with gradient accumulation (meta-pytorch/torchtune, the full and LoRA
fine-tuning recipes): each micro-batch's cross-entropy was averaged over that micro-batch's own
non-padding tokens, divided by the number of accumulation steps and backpropagated. With
micro-batches of different lengths, a token in a short micro-batch weighs more than a token in a
long one, so the accumulated gradient is not the gradient of the loss over the whole batch (it
differs from training without accumulation). Nothing is raised.
Source: https://github.com/meta-pytorch/torchtune/pull/1875 ("Normalize CE loss by total number of
(non-padding) tokens": sum each micro-batch's token losses and divide by the number of
non-padding tokens in the whole accumulation window; merged).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SEQ, MICRO_BATCH, ACCUMULATION = 16, 8, 6, 2, 3
IGNORE = -100


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        return self.lm_head(torch.tanh(self.mix(self.embed(tokens))))


def micro_batches():
    batches = []
    for lengths in ([6, 5], [2, 1], [4, 3]):
        tokens = torch.randint(0, VOCAB, (MICRO_BATCH, SEQ))
        labels = tokens.roll(-1, dims=1)
        for row, length in enumerate(lengths):
            labels[row, length:] = IGNORE
        batches.append((tokens, labels))
    return batches


model = TinyLM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
window = micro_batches()

losses = []
for step in range(3):
    optimizer.zero_grad()
    running = 0.0
    for tokens, labels in window:
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=IGNORE)
        loss = loss / ACCUMULATION
        loss.backward()
        running += loss.detach()
    optimizer.step()
    losses.append(running)

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
