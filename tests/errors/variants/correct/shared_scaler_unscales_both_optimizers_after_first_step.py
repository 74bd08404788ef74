# message: unscale_() is being called after step().
# code: AD149 (catalogue: amp_unscale_after_step)
# set: 15
# trigger: an encoder-decoder trained with two optimizers and one GradScaler steps them in a loop;
#   inside the loop a clipping helper unscales every optimizer of the list, so at the second
#   optimizer it unscales the first one again, already stepped
# source: none found; the pattern as users write it (one scaler, several optimizers)
# results: encoder, decoder, losses
import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Linear(4, 3)
decoder = nn.Linear(3, 4)
optimizers = [torch.optim.SGD(encoder.parameters(), lr=0.1), torch.optim.SGD(decoder.parameters(), lr=0.1)]
scaler = torch.amp.GradScaler("cpu", init_scale=4.0)


def clip_all(optimizers, max_norm):
    for optimizer in optimizers:
        scaler.unscale_(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, max_norm)


losses = []
for step in range(2):
    x = torch.randn(8, 4)
    loss = nn.functional.mse_loss(decoder(encoder(x)), x)
    for optimizer in optimizers:
        optimizer.zero_grad()
    scaler.scale(loss).backward()
    clip_all(optimizers, 1.0)  # PRIMARY
    for optimizer in optimizers:
        scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
