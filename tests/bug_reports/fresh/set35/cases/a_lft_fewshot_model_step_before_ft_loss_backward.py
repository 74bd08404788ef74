"""CrossDomainFewShot (hytseng0509/CrossDomainFewShot), methods/LFTNet.py `trainall_loop`: the
learned feature-wise transformation (LFT) is trained with a second-order, MAML-style step. The
model loss gives `meta_grad = torch.autograd.grad(model_loss, model_params, create_graph=True)`,
the fast weights are `weight.fast = weight - lr * meta_grad[k]`, the `ft_loss` is computed with the
fast weights, and then `self.model_optim.step()` updates the model's weights in place *before*
`ft_loss.backward()`. From PyTorch 1.5 the optimizers bump the weights' version counters and
training fails with "one of the variables needed for gradient computation has been modified by an
inplace operation: [torch.cuda.FloatTensor [8, 1]], which is output 0 of TBackward, is at version
2; expected version 1". The author: "it works on 1.4 ... We are correcting the problem for Pytorch
1.5"; no fix was posted. The correct version backpropagates `ft_loss` and steps the ft layers first
and steps the model afterwards (its gradients are still only `meta_grad`), so `ft_loss` is
differentiated at the weights it was computed with.
Source: https://github.com/hytseng0509/CrossDomainFewShot/issues/20
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Linear_fw(nn.Linear):
    def forward(self, x):
        if self.weight.fast is not None and self.bias.fast is not None:
            return F.linear(x, self.weight.fast, self.bias.fast)
        return super().forward(x)


class FeatureWiseTransformation_fw(nn.Module):
    feature_augment = False

    def __init__(self, num_features):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(1, num_features) * 0.3)
        self.beta = nn.Parameter(torch.ones(1, num_features) * 0.5)

    def forward(self, x):
        if self.feature_augment and self.training:
            gamma = (1 + torch.randn(1, x.size(1)) * F.softplus(self.gamma)).expand_as(x)
            beta = (torch.randn(1, x.size(1)) * F.softplus(self.beta)).expand_as(x)
            x = gamma * x + beta
        return x


class Backbone(nn.Module):
    def __init__(self, indim=8, hid=16):
        super().__init__()
        self.fc1 = Linear_fw(indim, hid)
        self.ft1 = FeatureWiseTransformation_fw(hid)
        self.fc2 = Linear_fw(hid, hid)
        self.ft2 = FeatureWiseTransformation_fw(hid)

    def forward(self, x):
        x = self.ft1(F.relu(self.fc1(x)))
        return self.ft2(F.relu(self.fc2(x)))


class ProtoNet(nn.Module):
    def __init__(self, n_way=3, n_support=2):
        super().__init__()
        self.feature = Backbone()
        self.n_way, self.n_support = n_way, n_support

    def set_forward_loss(self, x):
        n_query = x.size(1) - self.n_support
        z = self.feature(x.view(-1, x.size(-1))).view(self.n_way, -1, 16)
        proto = z[:, :self.n_support].mean(1)
        query = z[:, self.n_support:].reshape(-1, 16)
        scores = -((query.unsqueeze(1) - proto.unsqueeze(0)) ** 2).sum(-1)
        y = torch.arange(self.n_way).repeat_interleave(n_query)
        return scores, F.cross_entropy(scores, y)


def change_ft(model, ft):
    for m in model.modules():
        if isinstance(m, FeatureWiseTransformation_fw):
            m.feature_augment = ft


class LFTNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = ProtoNet()
        for p in self.model.parameters():
            p.fast = None
        model_params, ft_params = self.split_model_parameters()
        self.model_optim = torch.optim.Adam(model_params, lr=1e-3)
        self.ft_optim = torch.optim.Adam(ft_params, weight_decay=1e-8, lr=1e-3)

    def split_model_parameters(self):
        model_params, ft_params = [], []
        for n, p in self.model.named_parameters():
            if n.split(".")[-1] in ("gamma", "beta"):
                ft_params.append(p)
            else:
                model_params.append(p)
        return model_params, ft_params

    def trainall_loop(self, loader):
        losses = []
        for x, x_new in loader:
            for weight in self.split_model_parameters()[0]:
                weight.fast = None

            change_ft(self, ft=True)
            _, model_loss = self.model.set_forward_loss(x)

            meta_grad = torch.autograd.grad(model_loss, self.split_model_parameters()[0], create_graph=True)
            for k, weight in enumerate(self.split_model_parameters()[0]):
                weight.fast = weight - self.model_optim.param_groups[0]["lr"] * meta_grad[k]
            meta_grad = [g.detach() for g in meta_grad]

            change_ft(self, ft=False)
            self.model.eval()
            _, ft_loss = self.model.set_forward_loss(x_new)
            self.model.train()

            # optimize model
            self.model_optim.zero_grad()
            for k, weight in enumerate(self.split_model_parameters()[0]):
                weight.grad = meta_grad[k] if weight.grad is None else weight.grad + meta_grad[k]
            self.model_optim.step()

            # optimize ft
            self.ft_optim.zero_grad()
            ft_loss.backward()
            self.ft_optim.step()

            losses.append(torch.stack([model_loss.detach(), ft_loss.detach()]))
        return losses


net = LFTNet()
loader = [(torch.randn(3, 4, 8), torch.randn(3, 4, 8) + 0.5) for _ in range(3)]
losses = net.trainall_loop(loader)
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.model.parameters()]}
