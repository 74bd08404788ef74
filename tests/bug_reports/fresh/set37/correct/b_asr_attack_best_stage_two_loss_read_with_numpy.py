"""Second stage of an imperceptible audio adversarial attack (twosixlabs/armory#1472, the fix in
Trusted-AI/adversarial-robustness-toolbox PR #1677): a perturbation `delta` is optimised with Adam
against a per-example loss (the recogniser's loss plus a masking-threshold penalty); whenever an
example's loss improves, the attack keeps a NumPy copy of that loss and of the perturbation. The
loss entry still belongs to the graph (it requires grad), so
`best_loss_2nd_stage[i] = loss_2nd_stage[i].numpy()` raises "Can't call numpy() on Tensor that
requires grad. Use tensor.detach().numpy() instead." The maintainers' fix reads the value with
`.detach().cpu().numpy()`.
Source: https://github.com/twosixlabs/armory/issues/1472
expect: raises"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

batch_size, n_samples, n_classes = 3, 64, 5


class TinyRecognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 9, stride=4)
        self.fc = nn.Linear(4 * 14, n_classes)

    def forward(self, audio):
        h = torch.tanh(self.conv(audio.unsqueeze(1)))
        return self.fc(h.flatten(1))


def masking_penalty(delta, threshold):
    psd = torch.fft.rfft(delta).abs() ** 2
    return F.relu(psd - threshold).mean(dim=1)


model = TinyRecognizer()
for p in model.parameters():
    p.requires_grad_(False)

x = 0.5 * torch.randn(batch_size, n_samples)
target = torch.tensor([1, 3, 0])
threshold = torch.full((batch_size, n_samples // 2 + 1), 0.05)
alpha = 0.1

delta = torch.zeros(batch_size, n_samples, requires_grad=True)
optimizer = torch.optim.Adam([delta], lr=0.01)

best_loss_2nd_stage = np.full(batch_size, np.inf, dtype=np.float32)
best_delta = np.zeros((batch_size, n_samples), dtype=np.float32)

for it in range(6):
    logits = model(x + delta)
    loss_asr = F.cross_entropy(logits, target, reduction="none")
    loss_2nd_stage = loss_asr + alpha * masking_penalty(delta, threshold)
    optimizer.zero_grad()
    loss_2nd_stage.sum().backward()
    optimizer.step()

    for local_batch_size_idx in range(batch_size):
        if loss_2nd_stage[local_batch_size_idx] < best_loss_2nd_stage[local_batch_size_idx]:
            best_loss_2nd_stage[local_batch_size_idx] = loss_2nd_stage[local_batch_size_idx].detach().cpu().numpy()
            best_delta[local_batch_size_idx] = delta[local_batch_size_idx].detach().numpy()

result = {"best_loss": torch.from_numpy(best_loss_2nd_stage), "best_delta": torch.from_numpy(best_delta),
          "delta": delta.detach().clone()}
