"""A fine-tuning demonstration meant to show how training changes a pretrained transformer's
weights: one training step on a batch, written `optimizer.step()` right after the forward, then
`optimizer.zero_grad()`, then `loss.backward()`. The step runs before any gradient exists (it
changes nothing), and the gradients computed afterwards are never applied: the program runs, and
the "fine-tuned" weights are the pretrained ones. The change, from the page's note: `zero_grad()`
before the backward, `step()` after it.
Source: https://theneuralbase.com/fine-tuning-llm/learn/beginner/what-fine-tuning-changes-and-doesn-t/
expect: silent"""
import torch
import torch.nn as nn
from torch.optim import Adam

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=50, d_model=32, nhead=4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, input_ids, labels=None):
        length = input_ids.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        hidden = self.encoder(self.embed(input_ids), mask=mask, is_causal=True)
        logits = self.lm_head(hidden)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return logits, loss


model = TinyCausalLM()
before = {name: p.detach().clone() for name, p in model.named_parameters()}
optimizer = Adam(model.parameters(), lr=1e-3)

input_ids = torch.randint(0, 50, (4, 12))
labels = input_ids.clone()

# Forward and backward pass
logits, loss = model(input_ids=input_ids, labels=labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()

changed = {name: (p.detach() - before[name]).abs().max() for name, p in model.named_parameters()}
result = {"loss": loss.detach(), "params": [p.detach().clone() for p in model.parameters()]}
