"""Hugging Face transformers, issue 6939 / pull request 6999 ("fixed trainer tr_loss memory
leak"): training any model with `Trainer` (transformers 3.1) used up all the machine's memory
after about 20,000 steps.  `Trainer.training_step` ran the model, called `loss.backward()` and
returned `loss` itself; `Trainer.train` accumulated it as `tr_loss += self.training_step(model,
inputs)` into a tensor, so `tr_loss` carried a graph that grew by one step's loss node (and what
it holds) every step and was never freed.  The merged fix returns `loss.detach()` (the
maintainers preferred it to `.item()`, which syncs TPUs).
Re-created with a trainer class in the shape of `Trainer` (`_prepare_inputs`, `compute`-style
`training_step`, the `train` loop with its logging of `tr_loss`), a small model returning
`(loss, logits)` from keyword inputs, and random batches.
Nothing raises: `bug_shows()` shows that `tr_loss` after training is still attached to a graph.
Buggy line: `tr_loss += self.training_step(model, inputs)` (the step returns `loss` with its
graph).
Source: https://github.com/huggingface/transformers/pull/6999"""
import torch
import torch.nn as nn


class TinyForSequenceClassification(nn.Module):
    def __init__(self, dim=6, n_labels=2):
        super().__init__()
        self.encoder = nn.Linear(dim, 16)
        self.classifier = nn.Linear(16, n_labels)

    def forward(self, input_ids=None, labels=None):
        logits = self.classifier(torch.tanh(self.encoder(input_ids)))
        loss = nn.functional.cross_entropy(logits, labels)
        return (loss, logits)


class Trainer:
    def __init__(self, model, train_dataset, learning_rate=1e-3, num_train_epochs=1, logging_steps=2):
        self.model = model
        self.train_dataset = train_dataset
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        self.num_train_epochs = num_train_epochs
        self.logging_steps = logging_steps
        self.log_history = []

    def _prepare_inputs(self, inputs):
        return {k: v for k, v in inputs.items()}

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        outputs = model(**inputs)
        loss = outputs[0]
        loss.backward()
        return loss

    def train(self):
        model = self.model
        tr_loss = torch.tensor(0.0)
        logging_loss = 0.0
        global_step = 0
        model.zero_grad()
        for epoch in range(self.num_train_epochs):
            for step, inputs in enumerate(self.train_dataset):
                tr_loss += self.training_step(model, inputs)  # expect: ADL028
                self.optimizer.step()
                model.zero_grad()
                global_step += 1
                if global_step % self.logging_steps == 0:
                    self.log_history.append((tr_loss.item() - logging_loss) / self.logging_steps)
                    logging_loss = tr_loss.item()
        return global_step, tr_loss / global_step


def run():
    torch.manual_seed(0)
    dataset = [{"input_ids": torch.randn(4, 6), "labels": torch.randint(0, 2, (4,))} for _ in range(4)]
    trainer = Trainer(TinyForSequenceClassification(), dataset)
    return trainer.train()


def bug_shows():
    _, mean_loss = run()
    # tr_loss only feeds the logs; here it is still attached to every step's graph.
    return mean_loss.grad_fn is not None
