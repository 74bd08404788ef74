"""An exponential moving average of a model's weights (helper of
ema_tracker_updates_deepcopied_weights_without_no_grad_in_lib)."""
import copy

import torch  # noqa: F401


class ModelEma:
    def __init__(self, model, decay=0.999):
        self.module = copy.deepcopy(model)
        self.decay = decay

    def update(self, model):
        for e, p in zip(self.module.parameters(), model.parameters()):
            e.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)  # PRIMARY
