"""Ludwig's `Predictor.batch_predict` puts the model in eval mode and runs
`model.predict(inputs)` batch after batch with gradients on, accumulating the
predictions of every batch in lists before concatenating them: every batch's
graph stays alive until prediction ends.  The pull request "Added
torch.no_grad during batch predict to reduce memory pressure" wraps the loop.
Nothing raises; the collected predictions carry graphs.
Buggy line: `preds = self._predict(self.model, batch)` in `batch_predict`,
no `torch.no_grad()`.
Source: https://github.com/ludwig-ai/ludwig/pull/1739"""
from collections import defaultdict

import torch
import torch.nn as nn


class ECD(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.encoder = nn.Linear(d, 8)
        self.decoder = nn.Linear(8, 1)

    def forward(self, inputs):
        return {"y::logits": self.decoder(torch.relu(self.encoder(inputs["x"])))}

    def predict(self, inputs):
        outputs = self(inputs)
        return {"y": {"predictions": outputs["y::logits"] > 0, "probabilities": torch.sigmoid(outputs["y::logits"])}}


class Predictor:
    def __init__(self, model, device="cpu"):
        self.model = model
        self.device = device

    def _predict(self, model, batch):
        inputs = {"x": torch.from_numpy(batch["x"]).to(self.device)}
        return model.predict(inputs)

    def _accumulate_preds(self, preds, predictions):
        for of_name, of_preds in preds.items():
            for pred_name, pred_values in of_preds.items():
                predictions[f"{of_name}_{pred_name}"].append(pred_values)

    def batch_predict(self, batches):
        prev_model_training_mode = self.model.training
        self.model.eval()
        predictions = defaultdict(list)
        for batch in batches:
            preds = self._predict(self.model, batch)  # expect: ADL031
            self._accumulate_preds(preds, predictions)
        predictions = {k: torch.cat(v) for k, v in predictions.items()}
        self.model.train(prev_model_training_mode)
        return predictions


def bug_shows():
    """The collected probabilities carry the model's graph."""
    torch.manual_seed(0)
    batches = [{"x": torch.randn(3, 4).numpy()} for _ in range(2)]
    preds = Predictor(ECD()).batch_predict(batches)
    return preds["y_probabilities"].grad_fn is not None
