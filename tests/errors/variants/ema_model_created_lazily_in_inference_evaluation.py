# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to
#   get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for
#   more details.
# code: AD110 (catalogue: inference_inplace)
# set: 10
# trigger: a Trainer-like class creates its exponential moving average model lazily, with
#   torch.optim.swa_utils.AveragedModel, the first time its evaluate() method runs; evaluate() is
#   decorated with @torch.inference_mode(), so the averaged copy's tensors are inference tensors,
#   and the next update_parameters() after a training step writes them in place outside inference mode
# source: none found; the pattern as users write it (EMA weights for evaluation, made on demand)
# results: trainer.losses, model
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.ema = None
        self.losses = []

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        if self.ema is not None:
            self.ema.update_parameters(self.model)
        self.losses.append(loss.item())

    @torch.inference_mode()  # PRIMARY
    def evaluate(self, x, y):
        if self.ema is None:
            self.ema = AveragedModel(self.model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
        return F.mse_loss(self.ema(x), y).item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
trainer = Trainer(model)
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    trainer.train_step(x, y)
    trainer.losses.append(trainer.evaluate(x, y))
