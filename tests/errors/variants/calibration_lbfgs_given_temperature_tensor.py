# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 9
# trigger: temperature scaling fits one temperature with torch.optim.LBFGS; the temperature
#   parameter is given to LBFGS as it is, not in a list
# source: none found; the pattern as users write it (temperature scaling, Guo et al. 2017)
# results: temperature, calibrated_loss
import torch
from torch import nn
import torch.nn.functional as F


class TemperatureScaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = nn.Parameter(torch.ones(1) * 1.5)

    def fit(self, logits, labels):
        optimizer = torch.optim.LBFGS(self.temperature, lr=0.01, max_iter=20)  # PRIMARY

        def closure():
            optimizer.zero_grad()
            loss = F.cross_entropy(logits / self.temperature, labels)
            loss.backward()
            return loss

        optimizer.step(closure)
        return F.cross_entropy(logits / self.temperature, labels).item()


torch.manual_seed(0)
logits, labels = torch.randn(20, 3) * 3, torch.randint(0, 3, (20,))
scaler = TemperatureScaler()
calibrated_loss = scaler.fit(logits, labels)
temperature = scaler.temperature
