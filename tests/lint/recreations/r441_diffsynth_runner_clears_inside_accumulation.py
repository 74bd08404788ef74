"""DiffSynth-Studio's `launch_training_task` runs each batch inside an
accumulation block and starts it with `optimizer.zero_grad()`; the step
applies only when `gradient_accumulation_steps` batches have been
backpropagated, so every batch clears the gradients of the ones before it and
the update uses the last micro-batch "more than the accumulated gradient".
Nothing raises.  The fix clears after `optimizer.step()` and
`scheduler.step()`.
Buggy line: `optimizer.zero_grad()` at the start of the batch in `launch_training_task`.
Source: https://github.com/modelscope/DiffSynth-Studio/pull/1404"""
import torch
import torch.nn as nn


class DiffusionTrainingModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.denoiser = nn.Linear(4, 4)

    def forward(self, data):
        noise = data["noise"]
        return (self.denoiser(data["latents"] + noise) - noise).pow(2).mean()


def launch_training_task(dataset, model, optimizer, scheduler, num_epochs=1, gradient_accumulation_steps=2):
    for epoch_id in range(num_epochs):
        for step, data in enumerate(dataset):
            optimizer.zero_grad()  # expect: ADL018
            loss = model(data)
            (loss / gradient_accumulation_steps).backward()
            if (step + 1) % gradient_accumulation_steps == 0:
                optimizer.step()
                scheduler.step()


def bug_shows():
    """The weights move by the second micro-batch's gradient only."""
    torch.manual_seed(0)
    model = DiffusionTrainingModule()
    reference = DiffusionTrainingModule()
    reference.load_state_dict(model.state_dict())
    data = [{"latents": torch.randn(3, 4), "noise": torch.randn(3, 4)} for _ in range(2)]
    for d in data:
        (reference(d) / 2).backward()
    wanted = reference.denoiser.weight.detach() - 0.1 * reference.denoiser.weight.grad
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    launch_training_task(data, model, optimizer, torch.optim.lr_scheduler.StepLR(optimizer, 10))
    return not torch.allclose(model.denoiser.weight, wanted)
