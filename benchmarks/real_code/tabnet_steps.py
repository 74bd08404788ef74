"""pytorch-tabnet's own training loops, a few epochs each on data made here: self-supervised
pre-training (TabNetPretrainer, masked reconstruction), a classifier started from it with
embeddings of categorical columns and sparsemax masks, an entmax regressor with its augmentations,
a multi-task classifier; then predictions and the masks' explanations. Prints losses and checksums."""
import numpy as np, torch
from pytorch_tabnet.pretraining import TabNetPretrainer
from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor
from pytorch_tabnet.multitask import TabNetMultiTaskClassifier
from pytorch_tabnet.augmentations import RegressionSMOTE


def checksum(model):
    return round(sum(p.double().sum().item() for p in model.network.parameters()), 6)


rng = np.random.default_rng(0)
n, numeric = 256, 6
categories = rng.integers(0, 4, size=(n, 2))
X = np.concatenate([categories, rng.normal(size=(n, numeric))], axis=1).astype(np.float32)
y_class = (X[:, 2] + X[:, 3] * (categories[:, 0] == 1) > 0).astype(np.int64)
y_reg = (X[:, 2:4].sum(axis=1, keepdims=True) + 0.1 * categories[:, 1:2]).astype(np.float32)
y_tasks = np.stack([y_class, (X[:, 4] > 0).astype(np.int64)], axis=1)
train, valid = slice(0, 192), slice(192, n)
common = dict(n_d=8, n_a=8, n_steps=3, cat_idxs=[0, 1], cat_dims=[4, 4], cat_emb_dim=2, seed=0, verbose=1)
fit_args = dict(max_epochs=2, patience=10, batch_size=64, virtual_batch_size=16, drop_last=False, pin_memory=False)

pretrainer = TabNetPretrainer(optimizer_params=dict(lr=2e-2), mask_type="entmax", **common)
pretrainer.fit(X[train], eval_set=[X[valid]], pretraining_ratio=0.5, **fit_args)
print("pretrainer", checksum(pretrainer))

classifier = TabNetClassifier(optimizer_params=dict(lr=2e-2), mask_type="sparsemax", **common)
classifier.fit(X[train], y_class[train], eval_set=[(X[valid], y_class[valid])], eval_metric=["auc", "accuracy"],
               from_unsupervised=pretrainer, **fit_args)
print("classifier", checksum(classifier), classifier.predict_proba(X[valid])[:3].round(6).tolist())
explanation, masks = classifier.explain(X[valid][:4])
print("explain", explanation.round(6).sum(), {k: v.round(6).sum() for k, v in masks.items()})

regressor = TabNetRegressor(optimizer_params=dict(lr=2e-2), mask_type="entmax", lambda_sparse=1e-3,
                            scheduler_fn=torch.optim.lr_scheduler.StepLR, scheduler_params=dict(step_size=2, gamma=0.5), **common)
regressor.fit(X[train], y_reg[train], eval_set=[(X[valid], y_reg[valid])], eval_metric=["mse"],
              augmentations=RegressionSMOTE(p=0.5, seed=0), **fit_args)
print("regressor", checksum(regressor), regressor.predict(X[valid])[:3].round(6).tolist())

multitask = TabNetMultiTaskClassifier(optimizer_params=dict(lr=2e-2), **common)
multitask.fit(X[train], y_tasks[train], eval_set=[(X[valid], y_tasks[valid])], **fit_args)
print("multitask", checksum(multitask), [p[:2].round(6).tolist() for p in multitask.predict_proba(X[valid])])
print("feature importances", classifier.feature_importances_.round(6).tolist())
