"""FNO trained with H1Loss(d=2), which reduces over the batch only: one loss per channel.
Source: https://github.com/neuraloperator/neuraloperator/issues/103 (H1Loss(d=2, reduce_dims=[0, 1]))."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SpectralConv2d(nn.Module):
    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (channels * channels)
        self.weight = nn.Parameter(scale * torch.randn(channels, channels, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros_like(x_ft)
        out_ft[:, :, : self.modes, : self.modes] = torch.einsum(
            "bixy,ioxy->boxy", x_ft[:, :, : self.modes, : self.modes], self.weight
        )
        return torch.fft.irfft2(out_ft, s=x.shape[-2:])


class FNO(nn.Module):
    def __init__(self, in_channels, out_channels, hidden=16, modes=4):
        super().__init__()
        self.lifting = nn.Conv2d(in_channels, hidden, 1)
        self.spectral = SpectralConv2d(hidden, modes)
        self.pointwise = nn.Conv2d(hidden, hidden, 1)
        self.projection = nn.Conv2d(hidden, out_channels, 1)

    def forward(self, x):
        x = self.lifting(x)
        x = torch.nn.functional.gelu(self.spectral(x) + self.pointwise(x))
        return self.projection(x)


class H1Loss:
    """Relative H1 norm over the last d dimensions, summed over `reduce_dims` (neuraloperator)."""

    def __init__(self, d=2, reduce_dims=0):
        self.d = d
        self.reduce_dims = [reduce_dims] if isinstance(reduce_dims, int) else reduce_dims

    def uniform_h(self, x):
        return [1.0 / size for size in x.shape[-self.d:]]

    def compute_terms(self, x, y, h):
        dict_x, dict_y = {0: x}, {0: y}
        for j in range(1, self.d + 1):
            dim = x.dim() - self.d - 1 + j
            dict_x[j] = (torch.roll(x, -1, dims=dim) - torch.roll(x, 1, dims=dim)) / (2.0 * h[j - 1])
            dict_y[j] = (torch.roll(y, -1, dims=dim) - torch.roll(y, 1, dims=dim)) / (2.0 * h[j - 1])
        return dict_x, dict_y

    def reduce_all(self, x):
        for j in self.reduce_dims:
            x = torch.sum(x, dim=j, keepdim=True)
        return x.squeeze()

    def rel(self, x, y):
        dict_x, dict_y = self.compute_terms(x, y, self.uniform_h(x))
        diff = sum(torch.flatten(dict_x[j] - dict_y[j], start_dim=-self.d) ** 2 for j in dict_x)
        ynorm = sum(torch.flatten(dict_y[j], start_dim=-self.d) ** 2 for j in dict_y)
        diff = torch.sqrt(diff.sum(dim=-1)) / torch.sqrt(ynorm.sum(dim=-1))
        return self.reduce_all(diff)

    def __call__(self, y_pred, y):
        return self.rel(y_pred, y)


def fdtd_block(n=8, steps=8, size=16):
    """Waves as time steps: the first half of each simulation is the input, the rest the target."""
    xs = torch.linspace(0, 6.28, size)
    grid = xs[None, :] + xs[:, None]
    speed = 0.5 + torch.rand(n, 1, 1, 1)
    t = torch.arange(2 * steps, dtype=torch.float32)[None, :, None, None]
    field = torch.sin(grid[None, None] - speed * t * 0.3)
    return field[:, :steps], field[:, steps:]


x_train, y_train = fdtd_block()
model = FNO(in_channels=8, out_channels=8)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
train_loss = H1Loss(d=2, reduce_dims=[0, 1])
losses = []
for epoch in range(4):
    optimizer.zero_grad()
    out = model(x_train)
    loss = train_loss(out, y_train)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
