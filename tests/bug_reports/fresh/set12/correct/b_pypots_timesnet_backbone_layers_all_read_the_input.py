"""PyPOTS TimesNet backbone: every block read the embedded input X, so only the last block trained.
Source: https://github.com/WenjieDu/PyPOTS/issues/753 (start from `enc_out = X` and feed each block the previous output)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def FFT_for_Period(x, k=2):
    xf = torch.fft.rfft(x, dim=1)
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().numpy()
    period = x.shape[1] // top_list
    return period, abs(xf).mean(-1)[:, top_list]


class InceptionBlockV1(nn.Module):
    def __init__(self, in_channels, out_channels, num_kernels):
        super().__init__()
        self.kernels = nn.ModuleList(
            [nn.Conv2d(in_channels, out_channels, kernel_size=2 * i + 1, padding=i) for i in range(num_kernels)]
        )

    def forward(self, x):
        return torch.stack([kernel(x) for kernel in self.kernels], dim=-1).mean(-1)


class TimesBlock(nn.Module):
    def __init__(self, seq_len, pred_len, top_k, d_model, d_ffn, num_kernels):
        super().__init__()
        self.seq_len = seq_len
        self.pred_len = pred_len
        self.k = top_k
        self.conv = nn.Sequential(
            InceptionBlockV1(d_model, d_ffn, num_kernels), nn.GELU(), InceptionBlockV1(d_ffn, d_model, num_kernels)
        )

    def forward(self, x):
        B, T, N = x.size()
        period_list, period_weight = FFT_for_Period(x, self.k)
        total = self.seq_len + self.pred_len
        res = []
        for i in range(self.k):
            period = int(period_list[i])
            if total % period != 0:
                length = ((total // period) + 1) * period
                padding = torch.zeros([x.shape[0], length - total, x.shape[2]])
                out = torch.cat([x, padding], dim=1)
            else:
                length = total
                out = x
            out = out.reshape(B, length // period, period, N).permute(0, 3, 1, 2).contiguous()
            out = self.conv(out)
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :total, :])
        res = torch.stack(res, dim=-1)
        period_weight = F.softmax(period_weight, dim=1)
        period_weight = period_weight.unsqueeze(1).unsqueeze(1).repeat(1, T, N, 1)
        res = torch.sum(res * period_weight, -1)
        return res + x


class BackboneTimesNet(nn.Module):
    def __init__(self, n_layers, n_steps, n_pred_steps, top_k, d_model, d_ffn, n_kernels):
        super().__init__()
        self.seq_len = n_steps
        self.n_layers = n_layers
        self.n_pred_steps = n_pred_steps
        self.model = nn.ModuleList(
            [TimesBlock(n_steps, n_pred_steps, top_k, d_model, d_ffn, n_kernels) for _ in range(n_layers)]
        )
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, X) -> torch.Tensor:
        enc_out = X
        for i in range(self.n_layers):
            enc_out = self.layer_norm(self.model[i](enc_out))
        return enc_out


class TimesNetImputer(nn.Module):
    def __init__(self, n_steps, n_features, n_layers=2, d_model=8, d_ffn=8, top_k=2, n_kernels=2):
        super().__init__()
        self.enc_embedding = nn.Linear(2 * n_features, d_model)
        self.backbone = BackboneTimesNet(n_layers, n_steps, 0, top_k, d_model, d_ffn, n_kernels)
        self.projection = nn.Linear(d_model, n_features)

    def forward(self, X, missing_mask):
        enc_out = self.enc_embedding(torch.cat([X, missing_mask], dim=2))
        enc_out = self.backbone(enc_out)
        return self.projection(enc_out)


n_samples, n_steps, n_features = 8, 24, 3
t = torch.arange(n_steps).float()
series = torch.stack([torch.sin(2 * torch.pi * t / p) for p in (6.0, 8.0, 12.0)], dim=-1)
X_ori = series.unsqueeze(0) + 0.1 * torch.randn(n_samples, n_steps, n_features)
missing_mask = (torch.rand(n_samples, n_steps, n_features) > 0.2).float()
X = X_ori * missing_mask

model = TimesNetImputer(n_steps, n_features)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
losses = []
for epoch in range(4):
    optimizer.zero_grad()
    reconstruction = model(X, missing_mask)
    indicating_mask = 1 - missing_mask
    loss = (torch.abs(reconstruction - X_ori) * indicating_mask).sum() / indicating_mask.sum()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
