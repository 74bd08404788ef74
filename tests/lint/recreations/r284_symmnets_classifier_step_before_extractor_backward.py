"""SymmNets (multi-class domain adaptation) trains a feature extractor and a
classifier with two optimizers.  One forward pass produces both losses;
the solver backpropagates the classifier's loss with `retain_graph=True`,
steps the classifier, then backpropagates the feature extractor's loss,
which goes back through the classifier's weights that the step changed in
place ("one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [2048, 62]], which is
output 0 of TBackward").  The fix steps both optimizers after both backward
passes.
Buggy line: `self.optimizer_classifier.step()` in `Solver.update_network`.
Expected finding: ADL003 there.
Source: https://github.com/Gorilla-Lab-SCUT/MultiClassDA/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 16), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class SymmetricClassifier(nn.Module):
    """One linear layer over 2K outputs: the source task's K and the target task's K."""

    def __init__(self, num_classes=3):
        super().__init__()
        self.fc = nn.Linear(16, 2 * num_classes)

    def forward(self, feat):
        return self.fc(feat)


class Solver:
    def __init__(self, num_classes=3):
        self.num_classes = num_classes
        self.G = FeatureExtractor()
        self.F = SymmetricClassifier(num_classes)
        self.optimizer_feature_extractor = torch.optim.SGD(self.G.parameters(), lr=0.01)
        self.optimizer_classifier = torch.optim.SGD(self.F.parameters(), lr=0.01)

    def update_network(self, source_x, source_y, target_x):
        k = self.num_classes
        logits_source = self.F(self.G(source_x))
        logits_target = self.F(self.G(target_x))
        loss_task_s = F.cross_entropy(logits_source[:, :k], source_y)
        loss_task_t = F.cross_entropy(logits_source[:, k:], source_y)
        prob_t = F.softmax(logits_target, dim=1)
        loss_domain_t = -torch.log(prob_t[:, k:].sum(1)).mean()
        loss_confusion = -0.5 * (torch.log(prob_t[:, :k].sum(1)) + torch.log(prob_t[:, k:].sum(1))).mean()
        loss_summary_classifier = loss_task_s + loss_task_t + loss_domain_t
        loss_summary_feature_extractor = loss_confusion + loss_task_s

        self.optimizer_classifier.zero_grad()
        loss_summary_classifier.backward(retain_graph=True)
        self.optimizer_classifier.step()  # expect: ADL003

        self.optimizer_feature_extractor.zero_grad()
        loss_summary_feature_extractor.backward()
        self.optimizer_feature_extractor.step()


def run():
    torch.manual_seed(0)
    solver = Solver()
    solver.update_network(torch.randn(4, 10), torch.tensor([0, 1, 2, 0]), torch.randn(4, 10))
