"""Tokenising for the encoders: the Rust ``tokenizers`` library directly, in worker
processes when asked.

Texts are tokenised by the Rust ``tokenizers`` library directly (``encode_batch``), not
through transformers' Python layer, in batches sorted by length as sentence-transformers
does; ``workers=N`` tokenises in N processes ahead of the model (worth it where the model
is faster than one core's tokenising: on a GPU). :func:`torch_encode` is the torch
backend fed by these workers.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Tokenize:
    """Picklable tokeniser: ``tokenizer.json`` + truncation -> padded numpy arrays.

    Called with a list of texts (or of ``(query, text)`` pairs) it returns a dict of
    int64 arrays named as the model's inputs. Worker processes get this object and load
    the tokenizer once.
    """

    file: str
    max_length: int
    inputs: tuple[str, ...]
    pad_id: int
    pad_token: str

    def _load(self, padding: bool):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(self.file)
        tok.enable_truncation(self.max_length, strategy="longest_first")
        if padding:
            tok.enable_padding(pad_id=self.pad_id, pad_token=self.pad_token)
        else:  # the file may carry a padding of its own
            tok.no_padding()
        return tok

    @functools.cached_property
    def tokenizer(self):
        """Truncating and padding to the batch's longest text."""
        return self._load(padding=True)

    @functools.cached_property
    def unpadded_tokenizer(self):
        """Truncating, not padding."""
        return self._load(padding=False)

    def __getstate__(self) -> dict:
        # the loaded tokenizers stay behind: a worker loads its own once, instead of
        # receiving them with every task
        return {k: v for k, v in self.__dict__.items()
                if k not in ("tokenizer", "unpadded_tokenizer")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def unpadded(self, texts: Sequence) -> list[tuple[list[int], list[int]]]:
        """Each text's (ids, type ids), truncated and not padded."""
        return [(e.ids, e.type_ids) for e in self.unpadded_tokenizer.encode_batch(list(texts))]

    def pad(self, rows: Sequence[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
        """:meth:`unpadded` rows as the padded arrays :meth:`__call__` returns.

        >>> t = Tokenize("unused.json", 8, ("input_ids", "attention_mask"), 0, "[PAD]")
        >>> {k: v.tolist() for k, v in t.pad([([5, 6, 7], [0, 0, 0]), ([8], [0])]).items()}
        {'input_ids': [[5, 6, 7], [8, 0, 0]], 'attention_mask': [[1, 1, 1], [1, 0, 0]]}
        """
        width = max((len(ids) for ids, _ in rows), default=0)
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64)
        for i, (row, type_ids) in enumerate(rows):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
            types[i, :len(type_ids)] = type_ids
        out = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {k: out[k] for k in self.inputs}

    def __call__(self, texts: Sequence) -> dict[str, np.ndarray]:
        encs = self.tokenizer.encode_batch(list(texts))
        out = {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
               "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64)}
        if "token_type_ids" in self.inputs:
            out["token_type_ids"] = np.array([e.type_ids for e in encs], dtype=np.int64)
        return {k: out[k] for k in self.inputs}


def _length_order(texts: Sequence) -> np.ndarray:
    """Longest first, as sentence-transformers batches (less padding per batch)."""
    lengths = [len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts]
    return np.argsort([-n for n in lengths], kind="stable")


def tokenized_batches(tokenize: Tokenize, texts: Sequence, batch_size: int,
                      workers: int = 0) -> Iterator[dict[str, np.ndarray]]:
    """``tokenize`` applied to consecutive ``batch_size`` slices of ``texts``, in order.

    With ``workers`` > 0 the slices are tokenised in that many processes (forked where the
    system can; each loads the tokenizer once), at most ``2 * workers`` batches ahead of
    the consumer.
    """
    chunks = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
    if workers <= 0 or len(chunks) < 2:
        for chunk in chunks:
            yield tokenize(chunk)
        return
    pool = worker_pool(tokenize, workers)
    window: list = []
    it = iter(chunks)
    for chunk in it:
        window.append(pool.apply_async(tokenize, (chunk,)))
        if len(window) >= 2 * workers:
            break
    for chunk in it:
        yield window.pop(0).get()
        window.append(pool.apply_async(tokenize, (chunk,)))
    for res in window:
        yield res.get()


@functools.lru_cache(maxsize=2)
def worker_pool(tokenize: Tokenize, workers: int):
    """A process pool kept for the process's life (spawned once per tokenizer and size)."""
    import atexit
    import multiprocessing

    # fork where there is one (as torch's DataLoader): a spawned child would import the
    # user's script again, which breaks scripts without a __main__ guard
    methods = multiprocessing.get_all_start_methods()
    pool = multiprocessing.get_context("fork" if "fork" in methods else "spawn").Pool(workers)
    atexit.register(pool.terminate)
    return pool


def torch_encode(st, tokenize: Tokenize, texts: Sequence[str], batch_size: int,
                 workers: int) -> np.ndarray:
    """A sentence-transformers model's embeddings, its texts tokenised by ``tokenize``
    (in ``workers`` processes when > 0): the torch backend with tokenising spread out."""
    import torch

    texts = list(texts)
    order = _length_order(texts)
    ordered = [texts[i] for i in order]
    device = st.device
    parts = []
    with torch.inference_mode():
        for feeds in tokenized_batches(tokenize, ordered, batch_size, workers):
            features = {k: torch.from_numpy(v).to(device, non_blocking=True)
                        for k, v in feeds.items()}
            parts.append(st.forward(features)["sentence_embedding"].float().cpu().numpy())
    out = np.empty((len(texts), parts[0].shape[1] if parts else 0), dtype=np.float32)
    if parts:
        out[order] = np.concatenate(parts)
    return out


def st_tokenize(st) -> Tokenize:
    """A :class:`Tokenize` equal to a sentence-transformers model's own tokenising."""
    tok = st.tokenizer
    path = Path(_tokenizer_cache(tok))
    inputs = tuple(n for n in ("input_ids", "attention_mask", "token_type_ids")
                   if n in tok.model_input_names)
    return Tokenize(str(path), int(st.max_seq_length), inputs, int(tok.pad_token_id or 0),
                    str(tok.pad_token or "[PAD]"))


def _tokenizer_cache(tok) -> str:
    import hashlib
    import tempfile

    text = tok.backend_tokenizer.to_str()
    path = Path(tempfile.gettempdir()) / \
        f"mathir-tokenizer-{hashlib.sha1(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return str(path)


__all__ = ["Tokenize", "st_tokenize", "tokenized_batches", "torch_encode", "worker_pool"]
