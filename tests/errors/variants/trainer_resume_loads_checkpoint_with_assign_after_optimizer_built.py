# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# set: 26
# trigger: a Trainer-like class builds its optimizer and GradScaler in __init__; resume() then loads the
#   checkpoint with model.load_state_dict(state, assign=True), which makes the checkpoint's tensors the
#   model's parameters, so the optimizer still holds the replaced ones: they get no gradient and
#   GradScaler.step() finds none
# source: none found; the pattern as users write it (assign=True copied from a meta-device loading
#   recipe into a resume method)
# results: model, losses
import torch
from torch import nn
import torch.nn.functional as F


def build_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        self.scaler = torch.amp.GradScaler("cpu")

    def resume(self, state):
        self.model.load_state_dict(state, assign=True)  # PRIMARY

    def training_step(self, inputs, targets):
        self.optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            outputs = self.model(inputs)
        loss = F.mse_loss(outputs.float(), targets)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()


torch.manual_seed(0)
checkpoint = {key: value.clone() for key, value in build_model().state_dict().items()}
model = build_model()
trainer = Trainer(model)
trainer.resume(checkpoint)
losses = [trainer.training_step(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
