"""``utils.data``: datasets and the loader that cuts them into mini-batches.

A *dataset* is anything with ``len(ds)`` and ``ds[i]`` (one sample, often an
``(x, y)`` pair).  ``TensorDataset(X, Y)`` makes one from tensors that share
their first dimension.  ``DataLoader(ds, batch_size=32, shuffle=True)`` is an
iterable: each pass visits the samples once (in a fresh random order with
``shuffle``) and yields them ``batch_size`` at a time, stacked into tensors,
so a training loop reads ``for X, y in loader:``.

The shuffled order comes from ``randperm`` on the kit's generator, so
``manual_seed`` makes it repeatable.  (PyTorch first draws a seed for a fresh
generator and shuffles with that, so its order differs from this one.)
"""
from __future__ import annotations

import math

from ..ops.random_creation import randperm
from ..ops.shape import stack
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate", "random_split",
           "Subset"]


class Dataset:
    """Base class: a subclass defines ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    """Sample i is ``(t[i] for t in tensors)``; slices work too (``ds[0:64]``)."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, i):
        return self.dataset[self.indices[i]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split into non-overlapping random subsets of the given lengths (or fractions)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(lengths)):
            lengths[i % len(lengths)] += 1
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(n, generator=generator).tolist() if generator is not None else \
        randperm(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


def default_collate(samples):
    """Stack a list of samples into a batch: tensors along a new first dimension,
    numbers into a tensor, tuples/lists/dicts field by field."""
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(samples, 0)
    if isinstance(first, (int, float)):
        from ..ops.creation import tensor
        return tensor(samples)
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):  # a list of fields, as PyTorch gives
        return [default_collate(list(field)) for field in zip(*samples)]
    return samples


class DataLoader:
    """Mini-batches of a dataset: ``for X, y in DataLoader(ds, batch_size=10, shuffle=True)``."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool = False,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, generator=None,
                 **ignored) -> None:
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.generator = drop_last, generator
        self.collate_fn = collate_fn or default_collate
        self.num_workers = num_workers  # (always loaded in this process)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return range(n)
        return (randperm(n, generator=self.generator) if self.generator is not None
                else randperm(n)).tolist()

    def __iter__(self):
        order = list(self._order())
        if self.batch_size is None:  # no batching: the samples one by one
            for i in order:
                yield self.dataset[i]
            return
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            if self.drop_last and len(chunk) < self.batch_size:
                return
            yield self.collate_fn([self.dataset[i] for i in chunk])

    def __len__(self) -> int:
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
