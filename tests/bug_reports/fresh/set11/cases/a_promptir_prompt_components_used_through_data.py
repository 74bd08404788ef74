"""PromptIR, all-in-one image restoration with learned prompts (net/model.py, `PromptGenBlock`): the
prompt components are an `nn.Parameter`, but the forward pass reads them as
`self.prompt_param.data.unsqueeze(0).repeat(B, 1, 1, 1, 1, 1)` (and once more `.data.squeeze(1)`).
`.data` is a tensor outside the graph, so the loss never reaches the prompt components: they keep
their random initialisation while the optimizer holds them, and only the prompt weights and the
convolutions learn (no error, no warning).
Source: https://github.com/va1shn9v/PromptIR/issues/6 ("self.prompt_param is not learnable": "since
only self.prompt_param.data is used in forward here, self.prompt_param is not updating during
training").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PromptGenBlock(nn.Module):
    def __init__(self, prompt_dim=8, prompt_len=3, prompt_size=6, lin_dim=8):
        super().__init__()
        self.prompt_param = nn.Parameter(torch.rand(1, prompt_len, prompt_dim, prompt_size, prompt_size))
        self.linear_layer = nn.Linear(lin_dim, prompt_len)
        self.conv3x3 = nn.Conv2d(prompt_dim, prompt_dim, kernel_size=3, stride=1, padding=1, bias=False)

    def forward(self, x):
        B, C, H, W = x.shape
        emb = x.mean(dim=(-2, -1))
        prompt_weights = F.softmax(self.linear_layer(emb), dim=1)
        prompt_param = self.prompt_param.data.unsqueeze(0).repeat(B, 1, 1, 1, 1, 1)
        prompt_param = prompt_param.data.squeeze(1)
        prompt_param = prompt_weights.unsqueeze(-1).unsqueeze(-1).unsqueeze(-1) * prompt_param
        prompt_param = torch.sum(prompt_param, dim=1)
        prompt_param = F.interpolate(prompt_param, (H, W), mode="bilinear")
        return self.conv3x3(prompt_param)


class TinyPromptIR(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 3, padding=1)
        self.prompt = PromptGenBlock(prompt_dim=dim, lin_dim=dim)
        self.fuse = nn.Conv2d(2 * dim, dim, 1)
        self.out = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, degraded):
        x = F.relu(self.embed(degraded))
        x = F.relu(self.fuse(torch.cat([x, self.prompt(x)], dim=1)))
        return degraded + self.out(x)


model = TinyPromptIR()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)

clean = torch.rand(2, 3, 12, 12)
degraded = clean + 0.1 * torch.randn(2, 3, 12, 12)

losses = []
for step in range(4):
    loss = F.l1_loss(model(degraded), clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
