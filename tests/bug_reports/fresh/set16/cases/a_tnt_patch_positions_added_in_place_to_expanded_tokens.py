"""Transformer in Transformer image classifier (lucidrains/transformer-in-transformer, tnt.py): the
patch tokens are the learned `patch_tokens` parameter repeated over the batch, a view of that
parameter, and the forward added the patch position embedding to them in place
(`patches += ...`). PyTorch refuses an in-place write into a view of a leaf that requires grad, so
the very first forward call fails.
Source: https://github.com/lucidrains/transformer-in-transformer/issues/10 ("RuntimeError: a view of
a leaf Variable that requires grad is being used in an in-place operation." at `patches += ...`;
the fix given there: replace the two in-place additions with out-of-place ones).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IMAGE, PATCH, PIXEL, DIM, PIXEL_DIM, CLASSES, BATCH = 8, 4, 2, 16, 4, 3, 2
NUM_PATCHES = (IMAGE // PATCH) ** 2
PIXELS_PER_PATCH = (PATCH // PIXEL) ** 2


class TNT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_tokens = nn.Parameter(torch.randn(NUM_PATCHES + 1, DIM))
        self.patch_pos_emb = nn.Parameter(torch.randn(NUM_PATCHES + 1, DIM))
        self.pixel_pos_emb = nn.Parameter(torch.randn(PIXELS_PER_PATCH, PIXEL_DIM))
        self.to_pixel_tokens = nn.Linear(3 * PIXEL * PIXEL, PIXEL_DIM)
        self.pixels_to_patch = nn.Linear(PIXELS_PER_PATCH * PIXEL_DIM, DIM)
        self.outer = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, DIM), nn.GELU())
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, image):
        b = image.shape[0]
        # pixel tokens: (b * patches, pixels per patch, 3 * PIXEL * PIXEL)
        patches_of_pixels = F.unfold(image, kernel_size=PATCH, stride=PATCH)
        patches_of_pixels = patches_of_pixels.transpose(1, 2).reshape(b * NUM_PATCHES, 3, PATCH, PATCH)
        pixels = F.unfold(patches_of_pixels, kernel_size=PIXEL, stride=PIXEL).transpose(1, 2)
        pixels = self.to_pixel_tokens(pixels)

        patches = self.patch_tokens.unsqueeze(0).expand(b, -1, -1)
        patches += self.patch_pos_emb.unsqueeze(0)
        pixels += self.pixel_pos_emb.unsqueeze(0)

        summary = self.pixels_to_patch(pixels.reshape(b, NUM_PATCHES, -1))
        patches = torch.cat([patches[:, :1], patches[:, 1:] + summary], dim=1)
        patches = patches + self.outer(patches)
        return self.head(patches[:, 0])


model = TNT()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.randn(BATCH, 3, IMAGE, IMAGE)
labels = torch.randint(0, CLASSES, (BATCH,))

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
