"""HiNet synthesises a missing MR modality from two others with a fusion
generator.  The issue on `HiNet_SynthModel.py`: "When testing, we had
better use eval function.  And to reduce the GPU memory when testing,
no_grad is also needed", with the proposed `test`: `self.generator.eval()`
and `with torch.no_grad():` around the loop.  The repository's `test` runs
the generator in training mode and with gradients on for every test
volume, so dropout and batch statistics differ from inference and each
prediction keeps its graph.  Nothing raises.
Buggy line: `pred_out, pred_out1, pred_out2 = self.generator(x_fusion)` in
`test`.
Source: https://github.com/taozh2017/HiNet/issues/11"""
import torch
import torch.nn as nn


class FusionGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch1 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.branch2 = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.drop = nn.Dropout(0.5)
        self.head = nn.Conv2d(8, 1, 3, padding=1)
        self.head1 = nn.Conv2d(4, 1, 3, padding=1)
        self.head2 = nn.Conv2d(4, 1, 3, padding=1)

    def forward(self, x):
        f1, f2 = self.branch1(x[:, :1]), self.branch2(x[:, 1:])
        fused = self.drop(torch.cat([f1, f2], dim=1))
        return torch.tanh(self.head(fused)), self.head1(f1), self.head2(f2)


def model_task(inputs, task_id):
    t1, t2, flair = inputs
    if task_id == 1:
        return t1, t2, flair
    return t1, flair, t2


def prediction_syn_results(pred, target):
    mse = torch.mean((pred - target) ** 2)
    return {"MSE": mse, "PSNR": 10 * torch.log10(4 / mse)}


class HiNetSynthModel:
    def __init__(self, task_id=1):
        self.task_id = task_id
        self.generator = FusionGenerator()
        self.optimizer = torch.optim.Adam(self.generator.parameters(), lr=2e-4)

    def train(self, tr_loader):
        self.generator.train()
        for inputs in tr_loader:
            x_in1, x_in2, x_out = model_task(inputs, self.task_id)
            pred_out, pred_out1, pred_out2 = self.generator(torch.cat([x_in1, x_in2], dim=1))
            loss = (nn.functional.l1_loss(pred_out, x_out) + nn.functional.l1_loss(pred_out1, x_out)
                    + nn.functional.l1_loss(pred_out2, x_out))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def test(self, te_loader, ind_epoch=0):
        pred_eva_set = []
        for ii, inputs in enumerate(te_loader):
            x_in1, x_in2, x_out = model_task(inputs, self.task_id)
            x_fusion = torch.cat([x_in1, x_in2], dim=1)
            pred_out, pred_out1, pred_out2 = self.generator(x_fusion)  # missed: ADL031
            errors = prediction_syn_results(pred_out, x_out)
            pred_eva_set.append([errors["MSE"], errors["PSNR"]])
        return pred_eva_set


def make_loader(n=2):
    return [tuple(torch.rand(2, 1, 8, 8) * 2 - 1 for _ in range(3)) for _ in range(n)]


def bug_shows():
    """The test metrics hold graphs and the generator stayed in training
    mode."""
    torch.manual_seed(0)
    model = HiNetSynthModel()
    model.train(make_loader())
    results = model.test(make_loader())
    return model.generator.training and all(mse.grad_fn is not None for mse, _ in results)
