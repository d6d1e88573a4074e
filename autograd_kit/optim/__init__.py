"""``optim``: optimizers that update a model's parameters from their gradients.

The training loop every lesson writes::

    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in data:
        opt.zero_grad()              # gradients accumulate: clear last step's
        loss = loss_fn(model(x), y)
        loss.backward()              # fills p.grad for every parameter
        opt.step()                   # p ← p - lr · (update from p.grad)

``optimizer.py`` holds what all optimizers share; ``sgd.py``, ``adam.py`` and
``rmsprop.py`` each hold one update formula.
"""
from __future__ import annotations

from .adam import Adam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "RMSprop"]
