"""The Lightning callback for the older `pytorch_lightning` package name.

    import pytorch_lightning as pl
    from autograd_doctor.pytorch_lightning import AutogradDoctor

    trainer = pl.Trainer(callbacks=[AutogradDoctor()])

Same behaviour as `autograd_doctor.lightning.AutogradDoctor`, logged to the
`pytorch_lightning.autograd_doctor` logger.
"""

from __future__ import annotations

from autograd_doctor.integrations.lightning import callback_class

AutogradDoctor = callback_class("pytorch_lightning")

__all__ = ["AutogradDoctor"]
