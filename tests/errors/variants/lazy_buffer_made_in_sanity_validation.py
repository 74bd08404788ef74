# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a
#   clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17
#   for more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 5
# trigger: a Trainer-like class runs a sanity validation step under torch.inference_mode() before
#   training; the model allocates its running feature mean lazily on its first forward, so the
#   buffer is an inference tensor, and the training forward updates it in place
# source: https://github.com/sgl-project/sglang/issues/33470 (lazy buffers under inference_mode)
# results: trainer.losses, model, model.feature_mean
import torch
from torch import nn
import torch.nn.functional as F


class CenteredRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.feature_mean = None

    def forward(self, x):
        if self.feature_mean is None:
            self.feature_mean = torch.zeros(x.shape[1])  # PRIMARY
        if self.training:
            self.feature_mean.mul_(0.9).add_(0.1 * x.mean(0))
        return self.lin(x - self.feature_mean)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses = []

    def sanity_check(self, x, y):
        self.model.eval()
        with torch.inference_mode():
            F.mse_loss(self.model(x), y)
        self.model.train()

    def fit(self, batches):
        self.sanity_check(*batches[0])
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = CenteredRegressor()
batches = [(torch.randn(4, 3) + 1.0, torch.randn(4, 1)) for _ in range(3)]
trainer = Trainer(model)
trainer.fit(batches)
