"""Jacobian products of the built-in network (Linear and ReLU layers) from
its layers' signals, and a memory-bounded cache of those signals.

For each Linear layer the signals are its inputs A (n x in) and the
gradients D of the predictions with respect to its outputs (n R x out, row
i R + k that of sample i's prediction k). A row of the Jacobian is, layer
by layer, D_ik (outer) A_i for the weight and D_ik for the bias, so

    Phi V  = sum over layers of rowsum(D * (A dW^T + db))
    Phi^T U = per layer, (D * u)^T A for the weight and colsum(D * u) for
              the bias

cost one product with A per layer each, 2 n M multiply-adds, where
functorch's jvp and vjp run the network's forward pass as well (about
three times as many). The signals cost a forward and R backward passes,
once per input, and keep that forward pass's predictions (a prepared
prediction, lazy's residuals, is then the products' own pass): lazy's
Krylov solves multiply on the same rows (a matrix the plugin keeps under
its handle) at every step, so the cache keeps them by the identity of the
caller's input tensor, within CACHE_BYTES for the whole process, and
drops an input's signals when the input itself is freed. An input that
finds no room has them computed for each call; one whose signals exceed
the budget is multiplied on without them, by functorch.
"""

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import torch

# CACHE_BYTES bounds the signals all models of the process keep: two
# workers' inputs of 66,667 rows of a (512, 256) network on 100 inputs in
# float32 (436 MB each).
CACHE_BYTES = 1 << 30

# BLOCK_ROWS is the rows of one block of a product: its temporaries are a
# block's rows times a layer's width.
BLOCK_ROWS = 8192

@dataclass
class Signals:
    """One pass over an input: per Linear layer (A, D, has bias), and the
    predictions (n x outputs) the pass computed on the way."""

    layers: List[Tuple[torch.Tensor, torch.Tensor, bool]]
    pred: torch.Tensor

# Layout: per Linear layer (weight offset, out, in, bias offset or None) in
# the flattened parameters.
Layout = List[Tuple[int, int, int, Optional[int]]]


def layout(net: torch.nn.Module) -> Layout:
    """Where each Linear layer's weight and bias lie in the parameters
    flattened in named_parameters() order."""
    out, off = [], 0
    for m in net:
        if isinstance(m, torch.nn.Linear):
            o, i = m.weight.shape
            w, off = off, off + o * i
            b = None
            if m.bias is not None:
                b, off = off, off + o
            out.append((w, o, i, b))
    return out


def size(rows: int, R: int, lay: Layout, outs: int, element: int) -> int:
    """The bytes of the signals of rows inputs: per layer A (in values a
    row) and D (out values a row and output), and the predictions."""
    return element * rows * (outs + sum(i + R * o for _, o, i, _ in lay))


def nbytes(sig: Signals) -> int:
    return sig.pred.numel() * sig.pred.element_size() + \
        sum(a.numel() * a.element_size() + d.numel() * d.element_size() for a, d, _ in sig.layers)


def mul(sig: Signals, lay: Layout, cols: torch.Tensor, R: int) -> torch.Tensor:
    """Phi V, (n R) x p, for V's columns the rows of cols (p x M)."""
    a0 = sig.layers[0][0]
    n, p = a0.shape[0], cols.shape[0]
    out = torch.zeros(n * R, p, dtype=a0.dtype, device=a0.device)
    for (a, d, _), (wo, o, i, bo) in zip(sig.layers, lay):
        for c in range(p):
            dw = cols[c, wo:wo + o * i].reshape(o, i)
            db = None if bo is None else cols[c, bo:bo + o]
            for s in range(0, n, BLOCK_ROWS):
                e = min(n, s + BLOCK_ROWS)
                t = a[s:e] @ dw.T
                if db is not None:
                    t += db
                if R == 1:
                    out[s:e, c] += (d[s:e] * t).sum(1)
                else:
                    out[s * R:e * R, c] += (d[s * R:e * R].view(e - s, R, o) * t.unsqueeze(1)).sum(2).reshape(-1)
    return out


def tmul(sig: Signals, lay: Layout, rows: torch.Tensor, R: int, M: int) -> torch.Tensor:
    """Phi^T U, M x p, for U's columns the rows of rows (p x n R)."""
    a0 = sig.layers[0][0]
    n, p = a0.shape[0], rows.shape[0]
    out = torch.zeros(M, p, dtype=a0.dtype, device=a0.device)
    for (a, d, _), (wo, o, i, bo) in zip(sig.layers, lay):
        for c in range(p):
            gw = torch.zeros(o, i, dtype=a0.dtype, device=a0.device)
            gb = torch.zeros(o, dtype=a0.dtype, device=a0.device)
            for s in range(0, n, BLOCK_ROWS):
                e = min(n, s + BLOCK_ROWS)
                if R == 1:
                    gu = d[s:e] * rows[c, s:e].unsqueeze(1)
                else:
                    gu = (d[s * R:e * R].view(e - s, R, o) * rows[c, s * R:e * R].view(e - s, R, 1)).sum(1)
                gw += gu.T @ a[s:e]
                gb += gu.sum(0)
            out[wo:wo + o * i, c] = gw.reshape(-1)
            if bo is not None:
                out[bo:bo + o, c] = gb
    return out


class Cache:
    """Signals by (model, input) identity within budget bytes; an entry
    goes when its input is freed, or when a new one needs its room and it
    has not been used for IDLE seconds. A new input that finds no room has
    its signals computed for the call and not kept, rather than evict the
    signals another solve is still multiplying on and make both recompute
    them at every product: the answer is the same either way, so it never
    depends on which calls ran before. Signals larger than the budget are
    not computed (get returns None): the caller computes without them,
    for every call on such an input alike."""

    IDLE = 10.0

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lock = threading.Lock()
        # (owner, x) ids -> [owner ref, x ref, signals, bytes, last use]
        self.entries: "OrderedDict[Tuple[int, int], list]" = OrderedDict()
        self.bytes = 0

    def get(self, owner: object, x: torch.Tensor, size: int, compute: Callable[[], Signals]) -> Optional[Signals]:
        """The signals of x for owner: the kept ones, else compute()'s
        (size bytes), kept where they find room; None where size is above
        the budget."""
        key = (id(owner), id(x))
        now = time.monotonic()
        if size > self.budget:
            return None
        with self.lock:
            e = self._live(key, owner, x)
            if e is not None:
                e[4] = now
                self.entries.move_to_end(key)
                return e[2]
            self._drop(key)
            room = self._room(size, now)
        sig = compute()
        if not room:
            return sig
        with self.lock:
            e = self._live(key, owner, x)
            if e is not None:
                return e[2]  # another call on x kept its own meanwhile
            self._drop(key)
            if not self._room(size, time.monotonic()):
                return sig  # another input took the room meanwhile
            self.entries[key] = [weakref.ref(owner), weakref.ref(x), sig, size, time.monotonic()]
            self.bytes += size
        weakref.finalize(x, self.forget, key)
        return sig

    def _live(self, key: Tuple[int, int], owner: object, x: torch.Tensor) -> Optional[list]:
        """The entry under key when it is owner's and x's (ids are reused
        once their objects are freed), else None; the lock must be held."""
        e = self.entries.get(key)
        if e is not None and e[0]() is owner and e[1]() is x:
            return e
        return None

    def _room(self, size: int, now: float) -> bool:
        """Whether size bytes fit, after dropping the entries idle for IDLE
        seconds, least recently used first, as far as needed."""
        for key in list(self.entries):
            if self.bytes + size <= self.budget:
                break
            if now - self.entries[key][4] >= self.IDLE:
                self._drop(key)
        return self.bytes + size <= self.budget

    def forget(self, key: Tuple[int, int]) -> None:
        with self.lock:
            self._drop(key)

    def _drop(self, key: Tuple[int, int]) -> None:
        e = self.entries.pop(key, None)
        if e is not None:
            self.bytes -= e[3]


CACHE = Cache(CACHE_BYTES)
