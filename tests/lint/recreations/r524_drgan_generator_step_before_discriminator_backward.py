"""DR-GAN-by-pytorch's `Single_DRGAN` model runs one `forward` per batch (the
generator's synthetic image and the discriminator's outputs on it and on the
real image, kept on `self`), then `optimize_G_parameters()` -- whose
`backward_G` calls `self.Loss_G.backward(retain_graph=True)` -- steps
`optimizer_G`, and only then `optimize_D_parameters()` backpropagates
`Loss_D`, built from `self.syn_identity`, through the same graph, back into
the generator whose weights `optimizer_G.step()` has just changed in place:
"one of the variables needed for gradient computation has been modified by an
inplace operation" (the code was written for PyTorch 0.2, which did not
check).
Buggy line: `self.optimizer_G.step()` before `self.Loss_D.backward()`.
Source: https://github.com/zhangjunh/DR-GAN-by-pytorch/issues/17"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, N_p=2, N_z=3, d=6):
        super().__init__()
        self.enc = nn.Linear(d, 4)
        self.dec = nn.Linear(4 + N_p + N_z, d)

    def forward(self, image, pose, noise):
        return torch.tanh(self.dec(torch.cat([torch.tanh(self.enc(image)), pose, noise], 1)))


class Discriminator(nn.Module):
    def __init__(self, N_p=2, N_d=3, d=6):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(d, 8), nn.LeakyReLU(0.2), nn.Linear(8, N_d + 1 + N_p))

    def forward(self, x):
        return self.main(x)


class Single_DRGAN:
    def initialize(self, N_p=2, N_z=3, N_d=3):
        self.G = Generator(N_p=N_p, N_z=N_z)
        self.D = Discriminator(N_p=N_p, N_d=N_d)
        self.optimizer_G = torch.optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.criterion = nn.CrossEntropyLoss()
        self.L1_criterion = nn.L1Loss()
        self.w_L1 = 1.0
        self.N_p, self.N_z, self.N_d = N_p, N_z, N_d

    def set_input(self, batch):
        self.image = batch["image"]
        self.pose = batch["pose"]
        self.identity = batch["identity"]
        self.batchsize = self.image.size(0)
        self.frontal_pose = torch.randint(0, self.N_p, (self.batchsize,))
        self.input_pose = nn.functional.one_hot(self.frontal_pose, self.N_p).float()
        self.fake_identity = torch.zeros(self.batchsize).long()
        self.noise = torch.randn(self.batchsize, self.N_z) * 0.3

    def forward(self, batch):
        self.set_input(batch)
        self.syn_image = self.G(self.image, self.input_pose, self.noise)
        self.syn = self.D(self.syn_image)
        self.syn_identity = self.syn[:, :self.N_d + 1]
        self.syn_pose = self.syn[:, self.N_d + 1:]
        self.real = self.D(self.image)
        self.real_identity = self.real[:, :self.N_d + 1]
        self.real_pose = self.real[:, self.N_d + 1:]

    def backward_G(self):
        self.Loss_G_syn_identity = self.criterion(self.syn_identity, self.identity)
        self.Loss_G_syn_pose = self.criterion(self.syn_pose, self.frontal_pose)
        self.L1_Loss = self.L1_criterion(self.syn_image, self.image)
        self.Loss_G = self.Loss_G_syn_identity + self.Loss_G_syn_pose + self.w_L1 * self.L1_Loss
        self.Loss_G.backward(retain_graph=True)

    def backward_D(self):
        self.Loss_D_real_identity = self.criterion(self.real_identity, self.identity)
        self.Loss_D_real_pose = self.criterion(self.real_pose, self.pose)
        self.Loss_D_syn = self.criterion(self.syn_identity, self.fake_identity)
        self.Loss_D = self.Loss_D_real_identity + self.Loss_D_real_pose + self.Loss_D_syn
        self.Loss_D.backward()

    def optimize_G_parameters(self):
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()  # missed: ADL003

    def optimize_D_parameters(self):
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()


def train(model, dataloader, epochs=1):
    for epoch in range(epochs):
        for i, batch in enumerate(dataloader):
            model.forward(batch)
            model.optimize_G_parameters()
            model.optimize_D_parameters()


def run():
    torch.manual_seed(0)
    model = Single_DRGAN()
    model.initialize()
    data = [{"image": torch.randn(4, 6), "pose": torch.randint(0, 2, (4,)), "identity": torch.randint(1, 4, (4,))}]
    train(model, data)
