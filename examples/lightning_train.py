"""A tiny PyTorch Lightning model with an in-place bug, trained with the AutogradDoctor callback.

    python examples/lightning_train.py          # fails; the report names line 30
    python examples/lightning_train.py --fixed  # trains; the same losses as without the callback
"""

import sys

import lightning.pytorch as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from autograd_doctor.lightning import AutogradDoctor

FIXED = "--fixed" in sys.argv


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.out = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        inputs, targets = batch
        h = torch.sigmoid(self.hidden(inputs))
        if FIXED:
            h = torch.cat([torch.full_like(h[:, :1], 0.5), h[:, 1:]], dim=1)
        else:
            h[:, 0] = 0.5  # BUG: sigmoid saved h for backward
        loss = torch.nn.functional.binary_cross_entropy_with_logits(self.out(h), targets)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randint(0, 2, (32, 1)).float())
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, callbacks=[AutogradDoctor()])
    trainer.fit(Classifier(), DataLoader(data, batch_size=8))
    print("trained")
