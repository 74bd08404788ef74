"""SoftPool point-cloud completion (wangyida/softpool), `SoftPool.forward`: the operator sorts the
points' features into `regions` x `cabins` and then builds its convolutions inside `forward`:
`conv2d_1 = nn.Conv2d(self.size_feat, self.size_feat, kernel_size=(1, 3), stride=(1, 1)).cuda()`,
likewise `conv2d_2`, `conv2d_3`, `conv2d_5`. Every call makes new, randomly initialised layers:
they are not in `model.parameters()`, so the optimizer never trains them, their weights change at
every forward, and they are not in the checkpoint. Nothing fails (the reporter: "you shouldn't
create nn layers in forward function, otherwise you can't save the weights of conv2d into the
checkpoint file. I've been debugging for more than 3 days"). Re-created (CPU) with the operator,
a point-cloud encoder around it and a training loop.
Buggy line: `conv2d_1 = nn.Conv2d(...)` (and the other convs) inside `SoftPool.forward`.
Source: https://github.com/wangyida/softpool/issues/11"""
import torch
import torch.nn as nn


class SoftPool(nn.Module):
    def __init__(self, regions=4, cabins=8, sp_ratio=2):
        super().__init__()
        self.regions = regions
        self.num_cabin = cabins
        self.sp_ratio = sp_ratio

    def forward(self, x):
        [self.size_bth, self.size_feat, self.pnt_per_sort] = list(x.shape)
        self.pnt_per_sort //= self.sp_ratio
        conv2d_1 = nn.Conv2d(self.size_feat, self.size_feat, kernel_size=(1, 3), stride=(1, 1))  # missed: no rule (modules created inside forward) (layers made in forward: new random weights each call, never in model.parameters())
        conv2d_2 = nn.Conv2d(self.size_feat, self.size_feat, kernel_size=(1, 3), stride=(1, 1))
        conv2d_3 = nn.Conv2d(self.size_feat, self.size_feat, kernel_size=(1, self.num_cabin - 2 * (3 - 1)), stride=(1, 1))
        conv2d_5 = nn.Conv2d(self.size_feat, self.size_feat, kernel_size=(self.regions, 1), stride=(1, 1))

        sp_cube = torch.zeros(self.size_bth, self.size_feat, self.regions, self.pnt_per_sort)
        for region in range(self.regions):
            scores = x[:, region, :]
            idx = torch.argsort(scores, dim=-1, descending=True)[:, :self.pnt_per_sort]
            sp_cube[:, :, region, :] = torch.gather(x, 2, idx.unsqueeze(1).expand(-1, self.size_feat, -1))
        cabins = sp_cube.view(self.size_bth, self.size_feat, self.regions, self.num_cabin, -1).max(-1)[0]
        feat = conv2d_3(conv2d_2(conv2d_1(cabins)))
        return conv2d_5(feat).view(self.size_bth, -1)


class Encoder(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, dim, 1), nn.ReLU(), nn.Conv1d(dim, dim, 1))
        self.softpool = SoftPool()
        self.head = nn.Linear(dim, 3 * 16)

    def forward(self, points):
        return self.head(self.softpool(self.mlp(points))).view(points.size(0), 3, 16)


def train(steps=3):
    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    partial, complete = torch.randn(2, 3, 32), torch.randn(2, 3, 16)
    for _ in range(steps):
        loss = ((model(partial) - complete) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, partial


def bug_shows():
    """Two calls on the same input give different outputs: the convolutions are new each time,
    and none of them is among the model's parameters."""
    model, partial = train()
    model.eval()
    with torch.no_grad():
        first, second = model(partial), model(partial)
    n_conv_params = sum(1 for name, _ in model.named_parameters() if name.startswith("softpool"))
    return not torch.allclose(first, second) and n_conv_params == 0


if __name__ == "__main__":
    assert bug_shows()
    print("bug shows: SoftPool's convolutions are re-created at every call and never trained")
