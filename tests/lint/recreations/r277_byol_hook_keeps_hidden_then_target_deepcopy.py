"""BYOL wraps the backbone in a `NetWrapper` whose forward hook keeps the
chosen layer's output on the wrapper (`self.hidden = flatten(output)`);
`get_representation` normally reads it and clears it.  Here (as in the
version the pull request fixed, as far as its title and error say) the hook
is registered before the `hidden_layer=-1` branch returns `self.net(x)`
directly, so the hook's last output stays on the module.  The target encoder is made lazily, as a
`copy.deepcopy(self.online_encoder)` after the online encoder has run once,
and `deepcopy` of a module holding a non-leaf tensor raises ("Only Tensors
created explicitly by the user (graph leaves) support the deepcopy protocol
at the moment").  The fix clears `self.hidden` on that path too.
Buggy line: `self.hidden = flatten(output)` in `NetWrapper._hook`.
Expected finding: ADL017 (a graph tensor kept on the module) at the
`copy.deepcopy` that raises, naming the hook's store (the rule reports a
deep copy of a module whose method stores a graph tensor at the copy).
Source: https://github.com/lucidrains/byol-pytorch/pull/20"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def flatten(t):
    return t.reshape(t.shape[0], -1)


class MLP(nn.Module):
    def __init__(self, dim, projection_size, hidden_size=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden_size), nn.ReLU(), nn.Linear(hidden_size, projection_size))

    def forward(self, x):
        return self.net(x)


class NetWrapper(nn.Module):
    def __init__(self, net, projection_size, layer=-2):
        super().__init__()
        self.net = net
        self.layer = layer
        self.projector = MLP(4, projection_size)
        self.hidden = None
        self.hook_registered = False

    def _find_layer(self):
        children = [*self.net.children()]
        return children[self.layer]

    def _hook(self, _, __, output):
        self.hidden = flatten(output)

    def _register_hook(self):
        self._find_layer().register_forward_hook(self._hook)
        self.hook_registered = True

    def get_representation(self, x):
        if not self.hook_registered:
            self._register_hook()
        if self.layer == -1:
            return self.net(x)
        _ = self.net(x)
        hidden = self.hidden
        self.hidden = None
        return hidden

    def forward(self, x):
        representation = self.get_representation(x)
        return self.projector(representation)


class BYOL(nn.Module):
    def __init__(self, net, projection_size=4, hidden_layer=-1):
        super().__init__()
        self.online_encoder = NetWrapper(net, projection_size, layer=hidden_layer)
        self.target_encoder = None
        self.online_predictor = MLP(projection_size, projection_size)

    def _get_target_encoder(self):
        if self.target_encoder is None:
            self.target_encoder = copy.deepcopy(self.online_encoder)  # expect: ADL017
        return self.target_encoder

    def forward(self, image_one, image_two):
        online_pred_one = self.online_predictor(self.online_encoder(image_one))
        online_pred_two = self.online_predictor(self.online_encoder(image_two))
        with torch.no_grad():
            target_encoder = self._get_target_encoder()
            target_proj_one = target_encoder(image_one)
            target_proj_two = target_encoder(image_two)
        loss_one = 2 - 2 * F.cosine_similarity(online_pred_one, target_proj_two.detach(), dim=-1)
        loss_two = 2 - 2 * F.cosine_similarity(online_pred_two, target_proj_one.detach(), dim=-1)
        return (loss_one + loss_two).mean()


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
    learner = BYOL(backbone, hidden_layer=-1)
    opt = torch.optim.Adam(learner.parameters(), lr=3e-4)
    images = torch.randn(4, 6)
    loss = learner(images + 0.1 * torch.randn(4, 6), images + 0.1 * torch.randn(4, 6))
    opt.zero_grad()
    loss.backward()
    opt.step()
