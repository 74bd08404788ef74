"""Image-Inpainting (globally and locally consistent image completion on CIFAR-10), `train.py`:
`train_gan` steps the discriminator with `loss_d.backward(); optimizer_d.step();
optimizer_d.zero_grad()`, then the generator's adversarial loss is computed through the
discriminator on the inpainted images (not detached, as it must be for the generator) and
`loss_g.backward()` fills the discriminator's `.grad` as well as the generator's.  The
discriminator's gradients are cleared only after its own step, so the next iteration's
`optimizer_d.step()` applies the generator-loss gradient (which pushes D to call fakes real)
added to the discriminator's own.
Re-created in my own words with the script's structure: `create_mask`, the local and global
discriminators joined by `Discriminator(local_d, global_d)`, the generator, and `train_gan(g,
d, train, val, g_optimizer, d_optimizer, params, masks_fn)` with its `T_c`/`T_d` phases and
`w` weight.
Nothing raises: `bug_shows()` shows the generator loss's gradient left in the discriminator's
`.grad` when training stops, where the next discriminator step would apply it.
Buggy line: `loss_g.backward()` with D's gradients cleared only after D's step.
Source: https://github.com/tongyu0924/Image-Inpainting/blob/1f41038871308d48825dea394ab177b7807074e3/train.py"""
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cpu")


def create_mask(N, im_h, im_w, hole_h, hole_w, same_size=True):
    startY, startX = np.random.randint(0, im_h - hole_h, N), np.random.randint(0, im_w - hole_w, N)
    bounds = [(startY[i], startY[i] + hole_h, startX[i], startX[i] + hole_w) for i in range(N)]
    masks = np.zeros((N, 1, im_h, im_w), np.float32)
    for i in range(N):
        masks[i, 0, startY[i]: startY[i] + hole_h + 1, startX[i]: startX[i] + hole_w + 1] = 1
    return torch.tensor(masks), bounds


class Generator(nn.Module):
    def __init__(self, im_channels):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(im_channels + 1, 8, 3, padding=1), nn.LeakyReLU(0.1),
                                 nn.Conv2d(8, im_channels, 3, padding=1))

    def forward(self, X):
        return self.net(X)


class LocalDiscriminator(nn.Module):
    def __init__(self, im_channels, region_size=8):
        super().__init__()
        self.region_size = region_size
        self.net = nn.Sequential(nn.Conv2d(im_channels + 1, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    def forward(self, X, mask_bounds):
        return self.net(self.local_regions(X, mask_bounds))

    def local_regions(self, X, mask_bounds):
        N, ch, im_h, im_w = X.shape
        regions = torch.zeros((N, ch, self.region_size, self.region_size))
        for i, bounds in enumerate(mask_bounds):
            y1, y2, x1, x2 = bounds
            regions[i, :, : y2 - y1, : x2 - x1] = X[i, :, y1: y2, x1: x2]
        return regions


class GlobalDiscriminator(nn.Module):
    def __init__(self, im_channels):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(im_channels + 1, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    def forward(self, X):
        return self.net(X)


class Discriminator(nn.Module):
    def __init__(self, local_d, global_d):
        super().__init__()
        self.local_discriminator = local_d
        self.global_discriminator = global_d
        self.fc = nn.Linear(8, 1)

    def forward(self, X, mask_bounds):
        X_local = self.local_discriminator(X, mask_bounds)
        X_global = self.global_discriminator(X)
        return self.fc(torch.cat((X_local, X_global), dim=1))


def train_gan(g, d, train, val, g_optimizer, d_optimizer, params, masks_fn):
    train_loader = torch.utils.data.DataLoader(train, batch_size=params["batch_size"])
    optimizer_g = g_optimizer
    optimizer_d = d_optimizer
    T_c, T_d = params["T_c"], params["T_d"]
    w = params["w"]

    for epoch in range(params["epochs"]):
        for batch, _ in train_loader:
            g.train()
            d.train()
            N = batch.shape[0]
            batch = batch.to(device)
            masks_g, bounds_g = masks_fn(N)
            masks_g = masks_g.to(device)

            batch_masked = batch * (1 - masks_g)
            batch_with_masks = torch.cat((batch_masked, masks_g[:, :1]), dim=1)
            fake = g(batch_with_masks)
            loss_mse = (((batch - fake) * masks_g) ** 2).sum() / masks_g.sum()

            if epoch < T_c:
                loss_g = loss_mse
                loss_g.backward()
                optimizer_g.step()
                optimizer_g.zero_grad()
            else:
                inpainted = batch.clone()
                for i in range(len(bounds_g)):
                    y1, y2, x1, x2 = bounds_g[i]
                    inpainted[i, :, y1:y2 + 1, x1:x2 + 1] = masks_g[i, :, y1:y2 + 1, x1:x2 + 1]
                loss = nn.BCEWithLogitsLoss()
                inpainted = torch.cat((inpainted, masks_g[:, :1]), dim=1)
                d_fake = d(inpainted.detach(), bounds_g)

                masks_d, bounds_d = masks_fn(N)
                real = torch.cat((batch.clone(), masks_d[:, :1]), dim=1)
                d_real = d(real, bounds_d)

                loss_d_fake = loss(d_fake, torch.zeros_like(d_fake))
                loss_d_real = loss(d_real, torch.ones_like(d_real))
                loss_d = (loss_d_fake + loss_d_real) / 2
                loss_d.backward()
                optimizer_d.step()
                optimizer_d.zero_grad()

                if epoch >= T_c + T_d:
                    inpainted = batch.clone()
                    for i in range(len(bounds_g)):
                        y1, y2, x1, x2 = bounds_g[i]
                        inpainted[i, :, y1:y2 + 1, x1:x2 + 1] = fake[i, :, y1:y2 + 1, x1:x2 + 1]
                    inpainted = torch.cat((inpainted, masks_g[:, :1]), dim=1)
                    d_fake = d(inpainted, bounds_g)

                    loss_g = loss_mse + w * ((d_fake - 1) ** 2).mean()
                    loss_g.backward()  # missed: ADL024 (the generator loss reaches D, whose step runs on the next iteration before any zero_grad: the step is not between this backward and a clear of D)
                    optimizer_g.step()
                    optimizer_g.zero_grad()


def gen_masks(N, ch=3):
    return create_mask(N, 16, 16, 4, 4, same_size=False)


def build():
    torch.manual_seed(0)
    np.random.seed(0)
    images = torch.rand(4, 3, 16, 16)
    train = torch.utils.data.TensorDataset(images, torch.zeros(4))
    global_d = GlobalDiscriminator(im_channels=3)
    local_d = LocalDiscriminator(im_channels=3, region_size=8)
    discriminator = Discriminator(local_d=local_d, global_d=global_d)
    generator = Generator(im_channels=3)
    train_params = {"w": 0.0005, "batch_size": 2, "T_c": 0, "T_d": 0, "epochs": 1}
    optimizer_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
    optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=1e-4)
    return generator, discriminator, train, train_params, optimizer_g, optimizer_d


def run():
    generator, discriminator, train, train_params, optimizer_g, optimizer_d = build()
    train_gan(generator, discriminator, train, None, optimizer_g, optimizer_d, train_params, gen_masks)
    return discriminator


def bug_shows():
    # The discriminator's .grad holds the generator loss's gradient: the next D step adds it in.
    discriminator = run()
    return any(p.grad is not None and p.grad.abs().sum() > 0 for p in discriminator.parameters())
