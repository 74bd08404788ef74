"""Run kymatio's torch scattering transforms in the loops of its own examples, seeded, printing
losses and checksums (docs/real-code.md, thirteenth set).

kymatio (https://github.com/kymatio/kymatio) has no CPU test that trains; its examples do, on
data sets this machine cannot download. This driver re-creates, in a few lines each, the loops of
`examples/1d/reconstruct_torch.py` (a signal recovered from its 1-D scattering coefficients by
gradient descent on the input with a "bold driver" step size: the gradient read from `.grad`, the
step taken under `no_grad`, a new leaf made with `requires_grad = True`, the old one kept when the
loss went up), `examples/2d/plot_invert_scattering_torch.py` (an image recovered from its 2-D
scattering coefficients with Adam on the input) and `examples/1d/plot_classif_torch.py` (a linear
classifier trained with Adam on log-scattering features), on small seeded synthetic data, then a
model with the scattering transform inside its forward (a learned input filter before it) trained
end to end.
usage: python kymatio_steps.py   (kymatio on PYTHONPATH)
"""
import math

import torch
from kymatio.torch import Scattering1D, Scattering2D


def checksum(tensors):
    return sum(float(t.detach().double().abs().sum()) for t in tensors)


def harmonic_signal(length, generator):
    """A few windowed notes of random frequency, half overlapping (as the example's)."""
    notes, support = 5, length // 3
    signal = torch.zeros(length)
    window = torch.hann_window(support, periodic=False)
    t = torch.arange(support, dtype=torch.float32)
    for i in range(notes):
        frequency = 0.1 * torch.rand(1, generator=generator).item() + 0.05
        phase = 2 * math.pi * torch.rand(1, generator=generator).item()
        start = i * support // 2
        end = min(start + support, length)
        signal[start:end] += (torch.cos(2 * math.pi * t * frequency + phase) * window)[: end - start]
    return signal


def reconstruct_1d(iterations=40):
    generator = torch.Generator().manual_seed(1)
    length = 2 ** 10
    target = harmonic_signal(length, generator)
    scattering = Scattering1D(J=5, shape=length, Q=8)
    target_coefficients = scattering(target)
    learning_rate, accelerate, brake = 100.0, 1.1, 0.55
    torch.manual_seed(0)
    y = torch.randn(length, requires_grad=True)
    coefficients = scattering(y)
    history = []
    for k in range(iterations):
        error = torch.norm(target_coefficients - coefficients)
        if k % 10 == 0:
            print(f"1d reconstruction iteration {k:3d}, loss {error.item():.6f}")
        history.append(error.detach())
        torch.autograd.backward(error)
        step = y.grad
        with torch.no_grad():
            new_y = y - learning_rate * step
        new_y.requires_grad = True
        coefficients = scattering(new_y)
        if history[k] > history[k - 1]:
            learning_rate *= brake
        else:
            learning_rate *= accelerate
            y = new_y
    print(f"1d reconstruction final loss {history[-1].item():.6f} learning rate {learning_rate:.6f} checksum {checksum([y]):.6f}")


def invert_2d(iterations=20):
    generator = torch.Generator().manual_seed(2)
    source = torch.rand(3, 32, 48, generator=generator)
    scattering = Scattering2D(J=2, shape=(32, 48), max_order=1)
    target_coefficients = scattering(source)
    torch.manual_seed(0)
    image = torch.rand(source.shape, requires_grad=True)
    optimizer = torch.optim.Adam([image], lr=0.1)
    best_loss, best_image = float("inf"), None
    for epoch in range(iterations):
        loss = torch.nn.functional.mse_loss(scattering(image), target_coefficients)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss < best_loss:
            best_loss = loss.detach().item()
            best_image = image.detach().clone()
        if epoch % 5 == 0:
            print(f"2d inversion epoch {epoch + 1}, loss {loss.item():.8f}")
    mse = float(((source - best_image.clamp(0, 1)) ** 2).mean())
    print(f"2d inversion best loss {best_loss:.8f} image mse {mse:.8f}")


def classify_1d(epochs=8):
    generator = torch.Generator().manual_seed(3)
    length, classes, count = 2 ** 9, 4, 64
    labels = torch.arange(count) % classes
    time = torch.arange(length, dtype=torch.float32)
    signals = torch.sin(2 * math.pi * time * (0.02 + 0.03 * labels[:, None].float()))
    signals = signals + 0.5 * torch.randn(count, length, generator=generator)
    scattering = Scattering1D(J=4, shape=length, Q=6)
    features = scattering(signals)[:, 1:, :]
    features = torch.log(torch.abs(features) + 1e-6).mean(dim=-1)
    mean, std = features.mean(dim=0), features.std(dim=0)
    features = (features - mean) / std
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(features.shape[-1], classes), torch.nn.LogSoftmax(dim=1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = torch.nn.NLLLoss()
    batch_size = 16
    for epoch in range(epochs):
        permutation = torch.randperm(count)
        for i in range(count // batch_size):
            index = permutation[i * batch_size:(i + 1) * batch_size]
            model.zero_grad()
            loss = criterion(model(features[index]), labels[index])
            loss.backward()
            optimizer.step()
        response = model(features)
        accuracy = (response.argmax(dim=1) == labels).float().mean()
        print(f"1d classifier epoch {epoch}, average loss = {criterion(response, labels).item():.6f}, accuracy = {accuracy.item():.3f}")
    print(f"1d classifier checksum {checksum(model.parameters()):.6f}")


class FilteredScattering(torch.nn.Module):
    """A learned 1-D filter in front of a fixed scattering transform, then a linear head."""

    def __init__(self, length, classes):
        super().__init__()
        self.front = torch.nn.Conv1d(1, 1, kernel_size=9, padding=4)
        self.scattering = Scattering1D(J=3, shape=length, Q=4)
        count = self.scattering(torch.zeros(1, length)).shape[-2]
        self.head = torch.nn.Linear(count, classes)

    def forward(self, signals):
        filtered = self.front(signals[:, None, :])[:, 0, :]
        coefficients = self.scattering(filtered)
        return self.head(torch.log1p(coefficients.abs()).mean(dim=-1))


def train_end_to_end(steps=12):
    generator = torch.Generator().manual_seed(4)
    length, classes, count = 2 ** 8, 3, 24
    labels = torch.arange(count) % classes
    time = torch.arange(length, dtype=torch.float32)
    signals = torch.cos(2 * math.pi * time * (0.05 + 0.08 * labels[:, None].float()))
    signals = signals + 0.3 * torch.randn(count, length, generator=generator)
    torch.manual_seed(0)
    model = FilteredScattering(length, classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    for step in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(signals), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 3 == 0:
            print(f"end to end step {step}, loss {loss.item():.8f}")
    print(f"end to end checksum {checksum(model.parameters()):.6f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(1)
    reconstruct_1d()
    invert_2d()
    classify_1d()
    train_end_to_end()
