"""ProtoContra SFDA, prototype feature alignment: the source prototypes are
the weights of the segmentation head (`self.model.outc.conv.weight.view(...)`),
and the trainer means to keep that head fixed with
`self.model.outc.requires_grad = False`.  A module has no such switch: the
assignment only adds an attribute, the head's parameters still require grad,
the optimizer built over `self.model.parameters()` updates them, and the
"fixed" prototypes drift during adaptation.  Silent; `bug_shows()` shows the
head's weight changing after one step.  `requires_grad_(False)` freezes it.
Source: https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        return self.double_conv(x)


class OutConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels=3, output_dim=8, num_classes=2, num_prototypes=1):
        super().__init__()
        self.inc = DoubleConv(n_channels, output_dim)
        self.outc = OutConv(output_dim, num_classes * num_prototypes)

    def forward(self, x, only_feature=False):
        feature = F.normalize(self.inc(x), dim=1)
        predict = self.outc(feature)
        return feature, predict


class ProtoLoss(nn.Module):
    def __init__(self, nav_t=1.0, s_par=0.5):
        super().__init__()
        self.nav_t = nav_t
        self.s_par = s_par

    def forward(self, mu_s, f_t):
        sim_mat = torch.matmul(F.normalize(mu_s, dim=1), f_t.T)
        t2p_loss = -(F.softmax(sim_mat / self.nav_t, dim=0) * F.log_softmax(sim_mat / self.nav_t, dim=0)).sum(0).mean()
        p2t_loss = -(F.softmax(sim_mat / self.nav_t, dim=1) * F.log_softmax(sim_mat / self.nav_t, dim=1)).sum(1).mean()
        return self.s_par * t2p_loss, (1 - self.s_par) * p2t_loss


class PFA_Trainer():
    def __init__(self, opt):
        self.opt = opt

    def initialize(self):
        self.model = UNet(output_dim=self.opt['output_dim'], num_classes=self.opt['num_classes'])
        self.source_prototypes = self.model.outc.conv.weight.view(
            (self.opt['num_classes'] * self.opt['num_prototypes'], self.opt['output_dim']))
        self.model.outc.requires_grad = False  # expect: ADL016
        self.optimizer = torch.optim.Adam(list(self.model.parameters()), lr=self.opt['lr'])
        self.criterion_proto = ProtoLoss()

    def train_one_step(self, data):
        self.optimizer.zero_grad()
        imgs = data[0]
        target_f, predict = self.model(imgs, only_feature=True)
        target_f = target_f.permute(0, 2, 3, 1).reshape(-1, target_f.size(1))
        t2p_loss, p2t_loss = self.criterion_proto(self.source_prototypes, target_f)
        loss = t2p_loss + p2t_loss
        loss.backward()
        self.optimizer.step()
        return predict


def bug_shows():
    torch.manual_seed(0)
    trainer = PFA_Trainer({'output_dim': 8, 'num_classes': 2, 'num_prototypes': 1, 'lr': 1e-2})
    trainer.initialize()
    before = trainer.model.outc.conv.weight.detach().clone()
    trainer.train_one_step([torch.randn(2, 3, 6, 6)])
    return not torch.equal(before, trainer.model.outc.conv.weight.detach())
