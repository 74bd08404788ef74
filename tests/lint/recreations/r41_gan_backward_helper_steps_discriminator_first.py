"""EdgeConnect: `process()` returns the generator's and discriminator's
losses, and `backward()` runs the discriminator's backward and step before the
generator's backward; the generator's adversarial loss went through the
discriminator, whose weights the step changed.
Source: https://github.com/knazeri/edge-connect/issues/152"""
import torch
import torch.nn as nn
import torch.optim as optim


class EdgeGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True))
        self.decoder = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        return torch.sigmoid(conv2), [conv1, conv2]


class AdversarialLoss(nn.Module):
    def __init__(self, target_real_label=1.0, target_fake_label=0.0):
        super().__init__()
        self.register_buffer("real_label", torch.tensor(target_real_label))
        self.register_buffer("fake_label", torch.tensor(target_fake_label))
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
        return self.criterion(outputs, labels)


class EdgeModel(nn.Module):
    def __init__(self, lr=1e-4, d2g_lr=0.1, fm_loss_weight=10.0):
        super().__init__()
        self.fm_loss_weight = fm_loss_weight
        generator = EdgeGenerator()
        discriminator = Discriminator(in_channels=2)
        self.add_module("generator", generator)
        self.add_module("discriminator", discriminator)
        self.add_module("l1_loss", nn.L1Loss())
        self.add_module("adversarial_loss", AdversarialLoss())
        self.gen_optimizer = optim.Adam(params=generator.parameters(), lr=lr, betas=(0.0, 0.9))
        self.dis_optimizer = optim.Adam(params=discriminator.parameters(), lr=lr * d2g_lr, betas=(0.0, 0.9))

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        outputs = self(images, edges, masks)
        gen_loss = 0
        dis_loss = 0

        # discriminator loss
        dis_input_real = torch.cat((images, edges), dim=1)
        dis_input_fake = torch.cat((images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False)
        gen_loss += gen_gan_loss

        # generator feature matching loss
        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_loss += gen_fm_loss * self.fm_loss_weight

        logs = [("l_d1", dis_loss.item()), ("l_g1", gen_gan_loss.item())]
        return outputs, gen_loss, dis_loss, logs

    def forward(self, images, edges, masks):
        edges_masked = edges * (1 - masks)
        images_masked = images * (1 - masks) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss=None, dis_loss=None):
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()  # missed: ADL003

        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()


def run():
    torch.manual_seed(0)
    edge_model = EdgeModel()
    images = torch.rand(2, 1, 8, 8)
    edges = (torch.rand(2, 1, 8, 8) > 0.5).float()
    masks = (torch.rand(2, 1, 8, 8) > 0.7).float()
    outputs, gen_loss, dis_loss, logs = edge_model.process(images, edges, masks)
    edge_model.backward(gen_loss, dis_loss)
