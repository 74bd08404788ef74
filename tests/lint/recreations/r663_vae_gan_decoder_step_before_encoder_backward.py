"""Pytorch-VAE-GAN (hui-po-wang/Pytorch-VAE-GAN, VAE-GAN.ipynb): one forward,
`mean, logvar, rec_enc = G(datav)`, feeds three updates in a row: the
discriminator (`dis_img_loss.backward(retain_graph=True); opt_dis.step()`), the
decoder (`err_dec = gamma * rec_loss + gen_img_loss; err_dec.backward(retain_graph=True);
opt_dec.step()`), then the encoder (`err_enc = prior_loss + beta * rec_loss;
err_enc.backward()`). `rec_loss` goes through the decoder, whose weights
`opt_dec.step()` has just changed in place, so `err_enc.backward()` fails: "one of the
variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [32, 3, 5, 5]] is at version 2; expected version 1" (the last
ConvTranspose2d's weight). Re-created with the notebook's modules at a small size (CPU) and
its training cell.
Buggy line: `opt_dec.step()` (before `err_enc.backward()` backpropagates through the decoder).
Source: https://github.com/hui-po-wang/Pytorch-VAE-GAN/issues/5"""
import torch
import torch.nn as nn
import torch.optim as optim


class Encoder(nn.Module):
    def __init__(self, input_channels, output_channels):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(input_channels, 8, 5, stride=2, padding=2), nn.BatchNorm2d(8), nn.ReLU())
        self.fc_mean = nn.Linear(8 * 4 * 4, output_channels)
        self.fc_logvar = nn.Linear(8 * 4 * 4, output_channels)

    def forward(self, x):
        h = self.features(x).view(x.size(0), -1)
        return self.fc_mean(h), self.fc_logvar(h)


class Decoder(nn.Module):
    def __init__(self, input_size, representation_size=(8, 4, 4)):
        super().__init__()
        self.representation_size = representation_size
        dim = representation_size[0] * representation_size[1] * representation_size[2]
        self.preprocess = nn.Sequential(nn.Linear(input_size, dim), nn.BatchNorm1d(dim), nn.ReLU())
        self.deconv1 = nn.ConvTranspose2d(representation_size[0], 32, 5, stride=2, padding=2)
        self.act1 = nn.Sequential(nn.BatchNorm2d(32), nn.ReLU())
        self.deconv4 = nn.ConvTranspose2d(32, 3, 5, stride=1, padding=2)
        self.activation = nn.Tanh()

    def forward(self, code):
        bs = code.size()[0]
        h = self.preprocess(code).view(-1, *self.representation_size)
        output = self.act1(self.deconv1(h, output_size=(bs, 32, 8, 8)))
        return self.activation(self.deconv4(output, output_size=(bs, 3, 8, 8)))


class VAE_GAN_Generator(nn.Module):
    def __init__(self, input_channels, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.encoder = Encoder(input_channels, hidden_size)
        self.decoder = Decoder(hidden_size)

    def forward(self, x):
        mean, logvar = self.encoder(x)
        std = logvar.mul(0.5).exp_()
        reparametrized_noise = mean + std * torch.randn((x.size(0), self.hidden_size))
        return mean, logvar, self.decoder(reparametrized_noise)


class Discriminator(nn.Module):
    def __init__(self, input_channels):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(input_channels, 8, 5, stride=2, padding=2), nn.BatchNorm2d(8), nn.LeakyReLU(0.2))
        self.lth_features = nn.Sequential(nn.Linear(8 * 4 * 4, 32), nn.LeakyReLU(0.2))
        self.sigmoid_output = nn.Sequential(nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.sigmoid_output(self.similarity(x)).view(-1)

    def similarity(self, x):
        return self.lth_features(self.main(x).view(x.size(0), -1))


def train(max_epochs=1, batches=2, batch_size=4, hidden_size=6, lr=3e-4, beta=5, alpha=0.1, gamma=15):
    torch.manual_seed(0)
    G, D = VAE_GAN_Generator(3, hidden_size), Discriminator(3)
    criterion = nn.BCELoss()
    opt_enc = optim.RMSprop(G.encoder.parameters(), lr=lr)
    opt_dec = optim.RMSprop(G.decoder.parameters(), lr=lr)
    opt_dis = optim.RMSprop(D.parameters(), lr=lr * alpha)
    train_loader = [(torch.rand(batch_size, 3, 8, 8) * 2 - 1, None) for _ in range(batches)]
    for epoch in range(max_epochs):
        for data, _ in train_loader:
            ones_label, zeros_label = torch.ones(batch_size), torch.zeros(batch_size)
            mean, logvar, rec_enc = G(data)
            rec_noise = G.decoder(torch.randn(batch_size, hidden_size))

            # train discriminator
            dis_img_loss = (criterion(D(data), ones_label) + criterion(D(rec_enc), zeros_label)
                            + criterion(D(rec_noise), zeros_label))
            opt_dis.zero_grad()
            dis_img_loss.backward(retain_graph=True)
            opt_dis.step()

            # train decoder
            dis_img_loss = (criterion(D(data), ones_label) + criterion(D(rec_enc), zeros_label)
                            + criterion(D(rec_noise), zeros_label))
            gen_img_loss = -dis_img_loss
            rec_loss = ((D.similarity(rec_enc) - D.similarity(data)) ** 2).mean()
            err_dec = gamma * rec_loss + gen_img_loss
            opt_dec.zero_grad()
            err_dec.backward(retain_graph=True)
            opt_dec.step()  # expect: ADL003 (the decoder is updated in place before err_enc.backward() goes through it)

            # train encoder
            prior_loss = 1 + logvar - mean.pow(2) - logvar.exp()
            prior_loss = (-0.5 * torch.sum(prior_loss)) / torch.numel(mean.data)
            err_enc = prior_loss + beta * rec_loss
            opt_enc.zero_grad()
            err_enc.backward()
            opt_enc.step()


run = train  # the test harness runs `run()`


if __name__ == "__main__":
    train()
