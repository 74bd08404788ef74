"""A recommendation framework's training loop (a CTR model: pooled embeddings of sparse id
features, a deep tower, binary cross-entropy on clicks). The framework wraps the model's optimizer
in its own optimizer class so that it can accumulate gradients over several batches: `step()` and
`zero_grad()` only act every `gradient_accumulation_steps` calls. The guard was written as
`steps > 1 and step % steps == 0`, so with the default `gradient_accumulation_steps=1` (no
accumulation) the wrapped optimizer never steps and never clears the gradients: the training loop
runs, `loss.backward()` fills `.grad` (which only grows), and no parameter ever changes. The
loss curve stays flat, nothing raises.
Source: https://github.com/alibaba/TorchEasyRec/pull/226 ("[bugfix] fix tzrec optimizer not
update params": the two guards in `TZRecOptimizer.zero_grad` / `step` become
`gradient_accumulation_steps <= 1 or step % gradient_accumulation_steps == 0`; merged, with a test
that one `step()` without accumulation moves the parameter)
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_USERS, NUM_ITEMS, NUM_CATES = 50, 80, 8
EMB_DIM = 8


class RecOptimizer:
    """Wraps an optimizer; with gradient accumulation it steps every N-th call."""

    def __init__(self, optimizer, gradient_accumulation_steps=1):
        self._optimizer = optimizer
        self._gradient_accumulation_steps = gradient_accumulation_steps
        self._step = 0

    @property
    def param_groups(self):
        return self._optimizer.param_groups

    def zero_grad(self, set_to_none=False):
        if (
            self._gradient_accumulation_steps > 1
            and self._step % self._gradient_accumulation_steps == 0
        ):
            self._optimizer.zero_grad(set_to_none=set_to_none)

    def step(self):
        self._step += 1
        if (
            self._gradient_accumulation_steps > 1
            and self._step % self._gradient_accumulation_steps == 0
        ):
            self._optimizer.step()


class WideAndDeep(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(NUM_USERS, EMB_DIM)
        self.item_emb = nn.Embedding(NUM_ITEMS, EMB_DIM)
        self.cate_emb = nn.EmbeddingBag(NUM_CATES, EMB_DIM, mode="mean")
        self.wide = nn.Embedding(NUM_ITEMS, 1)
        self.deep = nn.Sequential(nn.Linear(3 * EMB_DIM, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, batch):
        cates = self.cate_emb(batch["cate_ids"], batch["cate_offsets"])
        deep_in = torch.cat([self.user_emb(batch["user_id"]), self.item_emb(batch["item_id"]), cates], dim=1)
        return (self.deep(deep_in) + self.wide(batch["item_id"])).squeeze(1)


def make_batch(batch_size=64):
    user_id = torch.randint(0, NUM_USERS, (batch_size,))
    item_id = torch.randint(0, NUM_ITEMS, (batch_size,))
    counts = torch.randint(1, 4, (batch_size,))
    cate_ids = torch.randint(0, NUM_CATES, (int(counts.sum()),))
    cate_offsets = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)[:-1]])
    label = ((user_id + item_id) % 3 == 0).float()
    return {"user_id": user_id, "item_id": item_id, "cate_ids": cate_ids,
            "cate_offsets": cate_offsets, "label": label}


def train_and_evaluate(model, optimizer, num_steps=60):
    losses = []
    model.train()
    for _ in range(num_steps):
        batch = make_batch()
        optimizer.zero_grad()
        logits = model(batch)
        loss = F.binary_cross_entropy_with_logits(logits, batch["label"])
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


model = WideAndDeep()
optimizer = RecOptimizer(torch.optim.Adam(model.parameters(), lr=1e-2))
losses = train_and_evaluate(model, optimizer)
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
