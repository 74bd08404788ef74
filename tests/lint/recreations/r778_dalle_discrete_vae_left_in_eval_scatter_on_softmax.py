"""dall-e-baby, `discrete_vae.py` (issue 1, "Error detected in SoftmaxBackward"): the discrete
VAE's `forward` uses hard Gumbel-softmax while `self.training` and otherwise takes
`softmax = F.softmax(encoding, dim=1)` and sharpens it in place with
`softmax = softmax.scatter_(1, torch.argmax(softmax, dim=1).unsqueeze(1), 1)`.  The trainer's
test branch puts the model in eval mode (`model = model.eval()`), and the
`model = model.train()` that should undo it sits inside the `if gs and save_every ...` block, so
when no checkpoint is due the next training batches run the eval branch: the in-place scatter
overwrites the softmax output that `SoftmaxBackward` saved, and `loss.backward()` fails.
Re-created in my own words with the repository's structure: an encoder and decoder of
convolutions, a codebook `nn.Embedding`, `DiscreteVAE.forward` returning `(encoding_ids, loss,
recons)`, and a `DiscreteVAETrainer.train(bs, n_epochs, lr, ..., test_every, save_every)` with the
test pass inside the batch loop.
Raises at `loss.backward()` of the first training batch after the test pass ("one of the
variables needed for gradient computation has been modified by an inplace operation ... output 0
of SoftmaxBackward0").
Source: https://github.com/yashbonde/dall-e-baby/issues/1 (code: discrete_vae.py at
https://github.com/yashbonde/dall-e-baby/blob/a8d505a/discrete_vae.py)"""
import torch
import torch.nn.functional as F
from torch import einsum, nn


class DiscreteVAE(nn.Module):
    def __init__(self, in_channels=3, hidden_dim=8, num_embeddings=6, embedding_dim=4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(in_channels, hidden_dim, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(hidden_dim, num_embeddings, 1),
        )
        self.codebook = nn.Embedding(num_embeddings, embedding_dim)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(embedding_dim, hidden_dim, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(hidden_dim, in_channels, 1),
        )

    def forward(self, input):
        encoding = self.encoder(input)
        if self.training:
            softmax = F.gumbel_softmax(encoding, tau=1.0, hard=True, dim=1)
        else:
            # testing needs no gradient, so the argmax is taken in place
            softmax = F.softmax(encoding, dim=1)
            softmax = softmax.scatter_(1, torch.argmax(softmax, dim=1).unsqueeze(1), 1)  # expect: ADL001
        encoding_ids = torch.argmax(softmax, dim=1).view(encoding.size(0), -1)
        quantized_inputs = einsum("bdhw,dn->bnhw", softmax, self.codebook.weight)
        recons = self.decoder(quantized_inputs)
        loss = F.mse_loss(recons, input)
        return encoding_ids, loss, recons


class DiscreteVAETrainer:
    def __init__(self, model, train_dataset, test_dataset):
        self.model = model
        self.train_dataset = train_dataset
        self.test_dataset = test_dataset

    def save_checkpoint(self, ckpt_path):
        self.saved = {k: v.clone() for k, v in self.model.state_dict().items()}

    def train(self, bs, n_epochs, lr, test_every=2, save_every=None):
        model = self.model
        optim = torch.optim.Adam(model.parameters(), lr=lr)
        gs = 0
        train_losses = [-1]
        model.train()
        for epoch in range(n_epochs):
            for i in range(0, len(self.train_dataset), bs):
                d = self.train_dataset[i:i + bs]
                _, loss, _ = model(d)
                loss = loss.mean()
                optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.5)
                optim.step()
                gs += 1
                train_losses.append(loss.item())

                if self.test_dataset is not None and gs and gs % test_every == 0:
                    model = model.eval()  # convert model to testing mode
                    test_loss = []
                    for j in range(0, len(self.test_dataset), bs):
                        with torch.no_grad():
                            _, loss, _ = model(self.test_dataset[j:j + bs])
                        test_loss.append(loss.item())

                if gs and save_every and gs % save_every == 0:
                    self.save_checkpoint(ckpt_path=f"vae_{gs}.pt")
                    model = model.train()  # convert model back to training mode


def run():
    torch.manual_seed(0)
    train_images = torch.rand(8, 3, 8, 8)
    test_images = torch.rand(4, 3, 8, 8)
    trainer = DiscreteVAETrainer(DiscreteVAE(), train_images, test_images)
    trainer.train(bs=2, n_epochs=1, lr=1e-3, test_every=2, save_every=10)
