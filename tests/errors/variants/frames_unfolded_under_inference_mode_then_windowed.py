# message: A view was created in inference mode and is being modified inplace in normal mode.
# code: AD105 (catalogue: view_inference_inplace)
# set: 6
# trigger: an audio front end frames the signal with unfold() inside torch.inference_mode() (the
#   framing is "preprocessing"); the training step then multiplies the frames in place by a learned
#   window
# source: none found; the pattern as users write it
# results: losses, window, head
import torch
from torch import nn

torch.manual_seed(0)
signal = torch.randn(2, 16)
window = nn.Parameter(torch.ones(8))
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([window, *head.parameters()], lr=0.1)
losses = []
for _ in range(2):
    with torch.inference_mode():
        frames = signal.unfold(-1, 8, 4)
    optimizer.zero_grad()
    frames.mul_(window)  # PRIMARY
    loss = head(frames).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
