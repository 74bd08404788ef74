"""A tiny Hugging Face model with an in-place bug, trained by `Trainer` with the AutogradDoctorCallback.

    python examples/huggingface_train.py    # fails; the report names the line marked BUG

Nothing is downloaded: the model is built from its config.
"""

import os

import torch
from transformers import PretrainedConfig, PreTrainedModel, Trainer, TrainingArguments

from autograd_doctor.huggingface import AutogradDoctorCallback

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class TinyConfig(PretrainedConfig):
    model_type = "tiny-regressor"


class TinyRegressor(PreTrainedModel):
    config_class = TinyConfig

    def __init__(self, config):
        super().__init__(config)
        self.hidden = torch.nn.Linear(4, 8)
        self.out = torch.nn.Linear(8, 1)

    def forward(self, features, labels=None):
        h = torch.tanh(self.hidden(features))
        h += 1.0  # BUG: tanh saved h for backward
        prediction = self.out(h)
        return {"loss": torch.nn.functional.mse_loss(prediction, labels), "logits": prediction}


class Examples(torch.utils.data.Dataset):
    def __init__(self):
        self.features, self.labels = torch.randn(32, 4), torch.randn(32, 1)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, index):
        return {"features": self.features[index], "labels": self.labels[index]}


if __name__ == "__main__":
    torch.manual_seed(0)
    args = TrainingArguments(output_dir="/tmp/tiny-regressor", per_device_train_batch_size=8, num_train_epochs=1,
                             use_cpu=True, report_to=[], save_strategy="no", disable_tqdm=True)
    trainer = Trainer(model=TinyRegressor(TinyConfig()), args=args, train_dataset=Examples(),
                      callbacks=[AutogradDoctorCallback()])
    trainer.train()
