"""BiOST (one-shot unsupervised cross-domain translation), issue 4: training raises "one of the
variables needed for gradient computation has been modified by an inplace operation", traced by
anomaly detection to `enc_ba = self.netEnc_a(fake_BA)` in `backward_G`.  `optimize_parameters`
gets both losses from one pass (`loss_G_A, loss_G_B = self.backward_G()`), backpropagates
`loss_G_A` with `retain_graph=True` and steps `optimizer_a` (over `chain(netEnc_a, netDec_a)`),
then backpropagates `loss_G_B`, whose cycle term `fake_BAB = netDec_b(netEnc_a(netDec_a(enc_b)))`
goes through the encoder and decoder of domain A that were just stepped.
Re-created in my own words with the repository's structure: a `BaseModel` with `initialize`, a
`define_ED` factory building encoder/decoder pairs, `BiOSTModel` with `set_input`, `forward`,
`backward_G` returning the two losses and `optimize_parameters`, and the training script's loop.
Raises at `loss_G_B.backward()`; buggy line: `self.optimizer_a.step()` before it.
Source: https://github.com/tomercohen11/BiOST/issues/4"""
from argparse import Namespace
from itertools import chain

import torch
import torch.nn as nn


def define_ED(input_nc, output_nc, ngf):
    encoder = nn.Sequential(nn.Conv2d(input_nc, ngf, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(ngf, ngf, 3, padding=1))
    decoder = nn.Sequential(nn.ReLU(), nn.Conv2d(ngf, ngf, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(ngf, output_nc, 3, padding=1), nn.Tanh())
    return encoder, decoder


class BaseModel:
    def initialize(self, opt):
        self.opt = opt
        self.isTrain = opt.isTrain


class BiOSTModel(BaseModel):
    def name(self):
        return 'BiOSTModel'

    def compute_kl(self, mu):
        return torch.mean(torch.pow(mu, 2))

    def initialize(self, opt):
        BaseModel.initialize(self, opt)
        self.netEnc_a, self.netDec_a = define_ED(opt.input_nc, opt.output_nc, opt.ngf)
        self.netEnc_b, self.netDec_b = define_ED(opt.input_nc, opt.output_nc, opt.ngf)
        if self.isTrain:
            self.criterionIdt = nn.L1Loss()
            self.mse = nn.MSELoss()
            self.optimizer_a = torch.optim.Adam(chain(self.netEnc_a.parameters(), self.netDec_a.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, 0.999))
            self.optimizer_b = torch.optim.Adam(chain(self.netEnc_b.parameters(), self.netDec_b.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, 0.999))
            self.optimizers = [self.optimizer_a, self.optimizer_b]

    def set_input(self, input):
        self.input_A = input['A']
        self.input_B = input['B']

    def forward(self):
        self.real_A = self.input_A
        self.real_B = self.input_B

    def backward_G(self):
        enc_a = self.netEnc_a(self.real_A)
        enc_b = self.netEnc_b(self.real_B)
        fake_AA = self.netDec_a(enc_a)
        fake_AB = self.netDec_b(enc_a)
        fake_BA = self.netDec_a(enc_b)
        fake_BB = self.netDec_b(enc_b)
        fake_ABA = self.netDec_a(self.netEnc_b(fake_AB))
        enc_ba = self.netEnc_a(fake_BA)
        fake_BAB = self.netDec_b(enc_ba)

        loss_idt_A = self.opt.idt_w * self.criterionIdt(fake_AA, self.real_A)
        loss_idt_B = self.opt.idt_w * self.criterionIdt(fake_BB, self.real_B)
        loss_cycle_A = self.opt.lambda_A * self.criterionIdt(fake_ABA, self.real_A)
        loss_cycle_B = self.opt.lambda_B * self.criterionIdt(fake_BAB, self.real_B)
        loss_kl_B = self.opt.kl_lambda * self.compute_kl(enc_b)
        loss_kl_A = self.opt.kl_lambda * self.compute_kl(enc_a)
        loss_feat_BA = self.opt.feat_weight * self.mse(enc_ba, enc_b.detach())

        loss_G_A = loss_cycle_A + loss_idt_A + loss_kl_A + loss_feat_BA
        loss_G_B = loss_cycle_B + loss_idt_B + loss_kl_B
        self.fake_AB = fake_AB.data
        self.fake_BA = fake_BA.data
        self.loss_cycle_A = loss_cycle_A.item()
        self.loss_cycle_B = loss_cycle_B.item()
        return loss_G_A, loss_G_B

    def optimize_parameters(self):
        self.forward()
        loss_G_A, loss_G_B = self.backward_G()

        self.optimizer_a.zero_grad()
        loss_G_A.backward(retain_graph=True)
        self.optimizer_a.step()  # expect: ADL003

        self.optimizer_b.zero_grad()
        loss_G_B.backward()
        self.optimizer_b.step()


def run():
    torch.manual_seed(0)
    opt = Namespace(isTrain=True, input_nc=3, output_nc=3, ngf=4, lr=2e-4, beta1=0.5,
                    lambda_A=1.0, lambda_B=1.0, idt_w=1.0, kl_lambda=0.001, feat_weight=0.001)
    model = BiOSTModel()
    model.initialize(opt)
    dataset = [{'A': torch.randn(1, 3, 8, 8), 'B': torch.randn(1, 3, 8, 8)} for _ in range(2)]
    for epoch in range(1, 2):
        for i, data in enumerate(dataset):
            model.set_input(data)
            model.optimize_parameters()
