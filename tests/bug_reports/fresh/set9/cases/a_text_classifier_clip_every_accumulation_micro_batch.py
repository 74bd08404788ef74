"""Fine-tuning a text classifier with gradient accumulation (the training loop of transformers'
examples/run_glue.py at the time): `clip_grad_norm_` is called after every micro-batch's
backward(), while `optimizer.step()` runs once every `gradient_accumulation_steps` micro-batches.
Each call clips the running sum of the gradients accumulated so far, so the earlier micro-batches
are clipped again and again and the step uses neither the clipped total nor the sum of the
micro-batch gradients (no error; the step is simply another one).
Source: https://github.com/huggingface/transformers/issues/1563 ("The implementation of grad
clipping is not correct when gradient accumulation is enabled": "torch.nn.utils.clip_grad_norm_
should be applied before optimizer.step() not after each backward"; fixed by
huggingface/transformers#1580, which clips once, just before the step).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab_size=50, dim=16, num_labels=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=32, dropout=0.0,
                                                  batch_first=True)
        self.classifier = nn.Linear(dim, num_labels)

    def forward(self, input_ids):
        hidden = self.encoder(self.embeddings(input_ids))
        return self.classifier(hidden[:, 0])


model = TextClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fct = nn.CrossEntropyLoss()
gradient_accumulation_steps, max_grad_norm = 4, 0.5
batches = [(torch.randint(0, 50, (4, 7)), torch.randint(0, 3, (4,))) for _ in range(12)]

model.train()
model.zero_grad()
losses = []
for step, (input_ids, labels) in enumerate(batches):
    loss = loss_fct(model(input_ids), labels)
    loss = loss / gradient_accumulation_steps
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    losses.append(loss.detach())
    if (step + 1) % gradient_accumulation_steps == 0:
        optimizer.step()
        model.zero_grad()
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
