"""Editing a column of a model's weight in place, outside no_grad: a view of a leaf that
requires grad.
Source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
(`model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
dense = nn.Linear(6, 4)
ori_pred_emb = torch.randn(4)
tgt_emb = torch.randn(4)
positions = [1, 3]
lambda_list_1 = [0.5, 0.25]
lambda_list_2 = [1.0, 2.0]

for i, pos in enumerate(positions):
    dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]  # PRIMARY
    dense.weight[:, pos] += tgt_emb * lambda_list_2[i]
edited = dense.weight.detach().clone()
