"""DTFD-MIL (double-tier feature distillation for whole-slide images): per
slide, the first tier's loss is backpropagated with `retain_graph=True` and
`optimizer0.step()` updates the dimension reduction, attention and
classifier; then the second tier's classifier is applied to instance
features distilled from the first tier (`tmidFeat.index_select(...)`) and
`loss1.backward()` runs back through the dimension reduction, whose weights
the step has just changed in place.  With PyTorch >= 1.5 it fails
("output 0 of AsStridedBackward0, is at version 6; expected version 5");
the reported fix moves `optimizer0.step()` after `loss1.backward()`.
Source: https://github.com/hrzhang1123/DTFD-MIL/issues/8"""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, n_channels):
        super().__init__()
        self.block = nn.Sequential(
            nn.Linear(n_channels, n_channels, bias=False), nn.ReLU(),
            nn.Linear(n_channels, n_channels, bias=False), nn.ReLU())

    def forward(self, x):
        return x + self.block(x)


class DimReduction(nn.Module):
    def __init__(self, n_channels, m_dim=8, num_layer_res=1):
        super().__init__()
        self.fc1 = nn.Linear(n_channels, m_dim, bias=False)
        self.relu1 = nn.ReLU()
        self.resBlocks = nn.Sequential(*[ResidualBlock(m_dim) for _ in range(num_layer_res)])

    def forward(self, x):
        return self.resBlocks(self.relu1(self.fc1(x)))


class AttentionGated(nn.Module):
    def __init__(self, L=8, D=4):
        super().__init__()
        self.attention_V = nn.Sequential(nn.Linear(L, D), nn.Tanh())
        self.attention_U = nn.Sequential(nn.Linear(L, D), nn.Sigmoid())
        self.attention_weights = nn.Linear(D, 1)

    def forward(self, x):
        A = self.attention_weights(self.attention_V(x) * self.attention_U(x))
        return F.softmax(torch.transpose(A, 1, 0), dim=1)


class Classifier1fc(nn.Module):
    def __init__(self, n_channels=8, n_classes=2):
        super().__init__()
        self.fc = nn.Linear(n_channels, n_classes)

    def forward(self, x):
        return self.fc(x)


class AttentionWithClassifier(nn.Module):
    def __init__(self, L=8, num_cls=2):
        super().__init__()
        self.attention = AttentionGated(L)
        self.classifier = Classifier1fc(L, num_cls)

    def forward(self, x):
        AA = self.attention(x)
        return self.classifier(torch.mm(AA, x))


def train_epoch(slides, labels, classifier, dimReduction, attention, UClassifier,
                optimizer0, optimizer1, ce_cri, numGroup=2, instance_per_group=1):
    for tfeat_tensor, tslideLabel in zip(slides, labels):
        slide_pseudo_feat, slide_sub_preds, slide_sub_labels = [], [], []
        feat_index = list(range(tfeat_tensor.shape[0]))
        random.shuffle(feat_index)
        index_chunk_list = [sst.tolist() for sst in np.array_split(np.array(feat_index), numGroup)]
        for tindex in index_chunk_list:
            slide_sub_labels.append(tslideLabel)
            subFeat_tensor = torch.index_select(tfeat_tensor, dim=0, index=torch.LongTensor(tindex))
            tmidFeat = dimReduction(subFeat_tensor)
            tAA = attention(tmidFeat).squeeze(0)
            tattFeats = torch.einsum('ns,n->ns', tmidFeat, tAA)
            tattFeat_tensor = torch.sum(tattFeats, dim=0).unsqueeze(0)
            slide_sub_preds.append(classifier(tattFeat_tensor))
            patch_pred_softmax = torch.softmax(classifier(tattFeats), dim=1)
            _, sort_idx = torch.sort(patch_pred_softmax[:, -1], descending=True)
            topk_idx = torch.cat([sort_idx[:instance_per_group], sort_idx[-instance_per_group:]], dim=0)
            slide_pseudo_feat.append(tmidFeat.index_select(dim=0, index=topk_idx))
        slide_pseudo_feat = torch.cat(slide_pseudo_feat, dim=0)

        # optimization for the first tier
        loss0 = ce_cri(torch.cat(slide_sub_preds, dim=0), torch.cat(slide_sub_labels, dim=0)).mean()
        optimizer0.zero_grad()
        loss0.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(dimReduction.parameters(), 5.0)
        optimizer0.step()  # missed: ADL003

        # optimization for the second tier
        gSlidePred = UClassifier(slide_pseudo_feat)
        loss1 = ce_cri(gSlidePred, tslideLabel).mean()
        optimizer1.zero_grad()
        loss1.backward()
        optimizer1.step()


def run():
    torch.manual_seed(0)
    random.seed(0)
    classifier = Classifier1fc(8, 2)
    attention = AttentionGated(8)
    dimReduction = DimReduction(16, 8)
    attCls = AttentionWithClassifier(L=8, num_cls=2)
    trainable_parameters = list(classifier.parameters()) + list(attention.parameters()) + list(dimReduction.parameters())
    optimizer_adam0 = torch.optim.Adam(trainable_parameters, lr=1e-4, weight_decay=1e-4)
    optimizer_adam1 = torch.optim.Adam(attCls.parameters(), lr=1e-4, weight_decay=1e-4)
    ce_cri = nn.CrossEntropyLoss(reduction='none')
    slides = [torch.randn(6, 16)]
    labels = [torch.tensor([1])]
    train_epoch(slides, labels, classifier, dimReduction, attention, attCls,
                optimizer_adam0, optimizer_adam1, ce_cri)
