"""Bottom-up top-down attention VQA: a GRU question encoder attends over region features, the
question and image representations are multiplied, and `SimpleClassifier` maps the joint
representation to answer scores through `Linear -> ReLU -> Dropout(dropout, inplace=True) -> Linear`.
The in-place dropout overwrites the ReLU's output, which autograd saved to compute the ReLU's
gradient, so the first `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation: [...], which is output 0 of ReluBackward0".
Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6 (RuntimeError "... [512, 2048]],
which is output 0 of ReluBackward0, is at version 1"; answer: in model/classifier.py
`nn.Dropout(dropout, inplace=True)` should be `nn.Dropout(dropout, inplace=False)`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMB, HID, REGIONS, VDIM, ANSWERS, SEQ, BATCH = 30, 12, 16, 5, 10, 7, 6, 4


class FCNet(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.main = nn.Sequential(nn.utils.parametrizations.weight_norm(nn.Linear(in_dim, out_dim)), nn.ReLU())

    def forward(self, x):
        return self.main(x)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout):
        super().__init__()
        self.q_net = FCNet(in_dim[0], hid_dim[0])
        self.v_net = FCNet(in_dim[1], hid_dim[0])
        self.main = nn.Sequential(
            nn.Linear(hid_dim[0], hid_dim[1]),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=False),
            nn.Linear(hid_dim[1], out_dim),
        )

    def forward(self, q_emb, v_emb):
        joint_repr = self.q_net(q_emb) * self.v_net(v_emb)
        return self.main(joint_repr)


class VQAModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_emb = nn.Embedding(VOCAB, EMB)
        self.q_emb = nn.GRU(EMB, HID, batch_first=True)
        self.att = nn.Linear(VDIM + HID, 1)
        self.classifier = SimpleClassifier((HID, VDIM), (HID, 2 * HID), ANSWERS, dropout=0.5)

    def forward(self, v, q):
        _, h = self.q_emb(self.w_emb(q))
        q_emb = h[-1]
        logits = self.att(torch.cat([v, q_emb.unsqueeze(1).expand(-1, REGIONS, -1)], dim=2))
        v_emb = (F.softmax(logits, dim=1) * v).sum(1)
        return self.classifier(q_emb, v_emb)


model = VQAModel()
optimizer = torch.optim.Adamax(model.parameters(), lr=2e-3)
v = torch.rand(BATCH, REGIONS, VDIM)
q = torch.randint(0, VOCAB, (BATCH, SEQ))
answers = torch.rand(BATCH, ANSWERS)
losses = []
for it in range(3):
    pred = model(v, q)
    loss = F.binary_cross_entropy_with_logits(pred, answers) * ANSWERS
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
