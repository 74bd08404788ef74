"""VAE-GAN trained with one optimizer per sub-network: the encoder's loss is
backpropagated with `retain_graph=True` and the encoder is stepped at once;
then the decoder's loss, computed in the same forward pass (its
reconstruction and the discriminator's view of it go back through the
encoder's layers), is backpropagated through the encoder's updated weights
("modified by an inplace operation ... is at version 2; expected version 1").
Source: https://github.com/ry85/VAE-GAN/issues/1"""
import torch
import torch.nn as nn
from torch.optim import RMSprop
from torch.optim.lr_scheduler import ExponentialLR


class Encoder(nn.Module):
    def __init__(self, in_features=16, z_size=4):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(in_features, 32), nn.BatchNorm1d(32), nn.ReLU())
        self.l_mu = nn.Linear(32, z_size)
        self.l_var = nn.Linear(32, z_size)

    def forward(self, ten):
        ten = self.fc(ten)
        return self.l_mu(ten), self.l_var(ten)


class Decoder(nn.Module):
    def __init__(self, z_size=4, out_features=16):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(z_size, 32), nn.ReLU(), nn.Linear(32, out_features), nn.Tanh())

    def forward(self, ten):
        return self.fc(ten)


class Discriminator(nn.Module):
    def __init__(self, in_features=16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.last = nn.Linear(32, 1)

    def forward(self, ten):
        layer = self.features(ten)
        return torch.sigmoid(self.last(layer)), layer


class VaeGan(nn.Module):
    def __init__(self, z_size=4):
        super().__init__()
        self.z_size = z_size
        self.encoder = Encoder(z_size=z_size)
        self.decoder = Decoder(z_size=z_size)
        self.discriminator = Discriminator()

    def forward(self, ten):
        ten_original = ten
        mus, log_variances = self.encoder(ten)
        variances = torch.exp(log_variances * 0.5)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten = ten_from_normal * variances + mus
        x_tilde = self.decoder(ten)
        x_p = self.decoder(torch.randn(len(ten), self.z_size))
        batch = torch.cat((ten_original, x_tilde, x_p), 0)
        disc_class, disc_layer = self.discriminator(batch)
        return x_tilde, disc_class, disc_layer, mus, log_variances

    @staticmethod
    def loss(ten_original, ten_predict, layer_original, layer_predicted, labels_original,
             labels_predicted, labels_sampled, mus, variances):
        nle = 0.5 * (ten_original.view(len(ten_original), -1) - ten_predict.view(len(ten_predict), -1)) ** 2
        kl = -0.5 * torch.sum(-variances.exp() - torch.pow(mus, 2) + variances + 1, 1)
        mse = torch.sum(0.5 * (layer_original - layer_predicted) ** 2, 1)
        bce_dis_original = -torch.log(labels_original + 1e-3)
        bce_dis_predicted = -torch.log(1 - labels_predicted + 1e-3)
        bce_dis_sampled = -torch.log(1 - labels_sampled + 1e-3)
        return nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled


def train(net, batches, lr=3e-4, lambda_mse=1e-6):
    optimizer_encoder = RMSprop(params=net.encoder.parameters(), lr=lr, alpha=0.9, eps=1e-8)
    lr_encoder = ExponentialLR(optimizer_encoder, gamma=0.75)
    optimizer_decoder = RMSprop(params=net.decoder.parameters(), lr=lr, alpha=0.9, eps=1e-8)
    optimizer_discriminator = RMSprop(params=net.discriminator.parameters(), lr=lr, alpha=0.9, eps=1e-8)

    for x in batches:
        net.train()
        batch_size = len(x)
        x_tilde, disc_class, disc_layer, mus, log_variances = net(x)

        disc_layer_original = disc_layer[:batch_size]
        disc_layer_predicted = disc_layer[batch_size:-batch_size]
        disc_class_original = disc_class[:batch_size]
        disc_class_predicted = disc_class[batch_size:-batch_size]
        disc_class_sampled = disc_class[-batch_size:]

        nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled = VaeGan.loss(
            x, x_tilde, disc_layer_original, disc_layer_predicted, disc_class_original,
            disc_class_predicted, disc_class_sampled, mus, log_variances)

        loss_encoder = torch.sum(kl) + torch.sum(mse)
        loss_discriminator = torch.sum(bce_dis_original) + torch.sum(bce_dis_predicted) + torch.sum(bce_dis_sampled)
        loss_decoder = torch.sum(lambda_mse * mse) - (1.0 - lambda_mse) * loss_discriminator

        net.zero_grad()
        loss_encoder.backward(retain_graph=True)
        optimizer_encoder.step()  # expect: ADL003
        net.zero_grad()

        loss_decoder.backward(retain_graph=True)
        optimizer_decoder.step()  # expect: ADL003
        net.discriminator.zero_grad()

        loss_discriminator.backward()
        optimizer_discriminator.step()
    lr_encoder.step()


def run():
    torch.manual_seed(0)
    train(VaeGan(), [torch.rand(4, 16) * 2 - 1 for _ in range(2)])
