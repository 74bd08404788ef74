"""A graph attack's log-likelihood filter (Metattack's degree-distribution
constraint) marks the allowed edges in a zero matrix and, for an undirected
graph, symmetrises it with `allowed_mask += allowed_mask.t()`.  The transpose
is a view of the same memory, and PyTorch refuses to add it into its own base
in place ("unsupported operation: some elements of the input tensor and the
written-to tensor refer to a single memory location"): every attack with the
constraint on (the default) fails here.
Source: https://github.com/DSE-MSU/DeepRobust (deeprobust/graph/utils.py, likelihood_ratio_filter)"""
import numpy as np
import torch


def likelihood_ratio_filter(node_pairs, new_ratios, modified_adjacency, threshold=0.004, undirected=True):
    allowed_edges = new_ratios < threshold
    filtered_edges = node_pairs[allowed_edges.numpy().astype(bool)]
    allowed_mask = torch.zeros(modified_adjacency.shape)
    allowed_mask[filtered_edges.T] = 1
    if undirected:
        allowed_mask += allowed_mask.t()  # expect: ADL010
    return allowed_mask


def run():
    n = 5
    node_pairs = np.array(np.triu(np.ones((n, n)), k=1).nonzero()).T
    new_ratios = torch.linspace(0.0, 0.01, len(node_pairs))
    return likelihood_ratio_filter(node_pairs, new_ratios, torch.zeros(n, n))
