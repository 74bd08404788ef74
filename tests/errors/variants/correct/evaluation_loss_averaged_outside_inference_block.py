# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 8
# trigger: an evaluation function sums the batch losses inside torch.inference_mode() (the sum
#   starts from the integer 0 and becomes an inference tensor) and divides it by the number of
#   batches with /= after the block
# source: https://github.com/mrdbourke/pytorch-deep-learning/issues/397 (test_loss /= len(data_loader)
#   outside the inference_mode block), re-written
# results: results, model
import torch
from torch import nn


def train_step(model, batches, loss_fn, optimizer):
    for x, y in batches:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()


def evaluate(model, batches, loss_fn):
    eval_loss = 0
    model.eval()
    with torch.inference_mode():
        for x, y in batches:
            eval_loss += loss_fn(model(x), y)
        eval_loss /= len(batches)  # PRIMARY
    model.train()
    return eval_loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.MSELoss()
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
results = []
for _ in range(2):
    train_step(model, batches, loss_fn, optimizer)
    results.append(evaluate(model, batches, loss_fn))
