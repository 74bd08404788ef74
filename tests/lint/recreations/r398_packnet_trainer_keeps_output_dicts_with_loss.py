"""packnet-sfm's HorovodTrainer.train takes a training step per batch
(`output = module.training_step(batch, i)`), backpropagates `output['loss']`,
steps, and appends the whole output dict to `outputs` for
`training_epoch_end`.  The dict still holds the loss tensor with its graph,
so every batch's graph of the epoch stays alive (memory grows through the
epoch; nothing raises).  The fix detaches the loss before appending it.
Buggy line: `outputs.append(output)` in `HorovodTrainer.train`.
Source: https://github.com/TRI-ML/packnet-sfm/pull/51"""
import torch
import torch.nn as nn


class DepthModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        self.optimizer = torch.optim.Adam(self.depth_net.parameters(), lr=1e-3)

    def training_step(self, batch, batch_idx):
        rgb, target = batch
        depth = self.depth_net(rgb)
        loss = torch.abs(depth - target).mean()
        return {"loss": loss, "metrics": {"abs_rel": loss.item()}}

    def training_epoch_end(self, outputs):
        return {"avg_train-loss": sum(output["loss"].item() for output in outputs) / len(outputs)}


class HorovodTrainer:
    def train(self, dataloader, module, optimizer):
        module.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            optimizer.zero_grad()
            output = module.training_step(batch, i)
            output["loss"].backward()
            optimizer.step()
            outputs.append(output)  # expect: ADL028
        self.last_outputs = outputs
        return module.training_epoch_end(outputs)


def bug_shows():
    """After the epoch, every kept output's loss still carries its graph."""
    torch.manual_seed(0)
    module = DepthModule()
    trainer = HorovodTrainer()
    batches = [(torch.randn(2, 8), torch.rand(2, 1)) for _ in range(3)]
    trainer.train(batches, module, module.optimizer)
    return all(output["loss"].grad_fn is not None for output in trainer.last_outputs)
