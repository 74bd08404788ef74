"""The helper keeps the window outputs' graph (the maintainers' fix: no detach inside the
sliding-window function), so the blended map trains the segmenter.
Source: https://github.com/Project-MONAI/MONAI/issues/6033."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ROI, STRIDE = 16, 8


def sliding_window_inference(images, predictor):
    batch, _, height, width = images.shape
    output, count = None, torch.zeros(1, 1, height, width)
    for top in range(0, height - ROI + 1, STRIDE):
        for left in range(0, width - ROI + 1, STRIDE):
            window = predictor(images[:, :, top:top + ROI, left:left + ROI])
            if output is None:
                output = torch.zeros(batch, window.shape[1], height, width)
            output[:, :, top:top + ROI, left:left + ROI] += window
            count[:, :, top:top + ROI, left:left + ROI] += 1
    return output / count


segmenter = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3, padding=1))
optimizer = torch.optim.Adam(segmenter.parameters(), lr=1e-3)
scans = torch.randn(2, 1, 32, 32)
organ_masks = (scans > 0.5).long().squeeze(1)
losses = []
for step in range(3):
    logits = sliding_window_inference(scans, segmenter)
    loss = F.cross_entropy(logits, organ_masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in segmenter.parameters()]}
