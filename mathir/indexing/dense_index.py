"""Answer texts and a dense (bi-encoder) index of them, built next to the answer index.

Neural models read answers with formulas kept as ``$LaTeX$`` (the answer index holds
them as words), so two sibling directories sit beside an :class:`AnswerIndex` at ``I``:

* ``I-texts/``: :class:`AnswerTexts`, ``texts.jsonl`` (docno, title, text) plus
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

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyterrier as pt
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.indexing.answer_index import AnswerCollection, AnswerIndex
from mathir.indexing.html_text import html_to_text
from mathir.storage import artifact_meta, build_or_reuse, file_fingerprint, read_manifest

TEXTS_FORMAT = 1
DENSE_FORMAT = 1


def iter_answer_texts(collection: AnswerCollection) -> Iterator[dict]:
    """Answers as ``{"docno", "title", "text"}``: the question's title kept apart, LaTeX kept.

    Like :meth:`AnswerCollection.iter_answers` (questions precede their answers), but
    with the title in its own field so that every passage of a long answer can repeat it.

    >>> from mathir.samples import arqmath_sample
    >>> doc = next(iter_answer_texts(AnswerCollection.at(arqmath_sample().posts)))
    >>> sorted(doc)
    ['docno', 'text', 'title']
    """
    titles: dict[str, str] = {}
    for post in collection.iter_posts():
        if post.post_type == "question":
            titles[post.post_id] = html_to_text(post.title)
            continue
        yield {"docno": post.post_id, "title": titles.get(post.parent_id or "", ""),
               "text": post.text(False)}


def collection_of(index: AnswerIndex) -> AnswerCollection:
    """The collection an answer index was built from (its manifest records the path)."""
    info = index.manifest.get("collection", {})
    if "path" not in info:
        raise InputError("the answer index does not record its collection", path=index.path)
    return AnswerCollection(Path(info["path"]), info.get("kind", "posts"))


def sibling(index: AnswerIndex | str | Path, suffix: str) -> Path:
    """The directory ``<index>-<suffix>`` beside an answer index.

    >>> sibling("/tmp/idx/answers", "texts").as_posix()
    '/tmp/idx/answers-texts'
    """
    path = index.path if isinstance(index, AnswerIndex) else Path(index)
    return path.parent / f"{path.name}-{suffix}"


class AnswerTexts(Mapping):
    """docno -> answer text (title, then the answer; formulas as ``$LaTeX$``).

    Loaded into memory on first use (about the collection's text size).

    >>> import tempfile
    >>> from mathir.samples import arqmath_sample
    >>> texts = AnswerTexts.build(arqmath_sample().posts, tempfile.mkdtemp() + "/t", quiet=True)
    >>> len(texts), "$" in " ".join(texts.frame()["text"])
    (250, True)
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "answer-texts":
            raise InputError("not a mathir answer-texts directory (no manifest.json)", path=self.path)
        self._frame: pd.DataFrame | None = None
        self._text: dict[str, str] | None = None

    def frame(self) -> pd.DataFrame:
        """All answers as a frame with columns docno, title, text (collection order)."""
        if self._frame is None:
            self._frame = pd.read_json(self.path / "texts.jsonl", lines=True, dtype={"docno": str})
        return self._frame

    def _texts(self) -> dict[str, str]:
        if self._text is None:
            f = self.frame()
            self._text = {d: f"{t} {x}" if t else x
                          for d, t, x in zip(f["docno"], f["title"], f["text"], strict=True)}
        return self._text

    def __getitem__(self, docno: str) -> str:
        return self._texts()[docno]

    def __iter__(self):
        return iter(self._texts())

    def __len__(self) -> int:
        return int(self.manifest["num_docs"])

    @classmethod
    def build(cls, collection: AnswerCollection | str | Path, path: str | Path, *,
              overwrite: bool = False, quiet: bool = False) -> AnswerTexts:
        """Store the answers of ``collection`` in ``path`` (reused when up to date)."""
        if not isinstance(collection, AnswerCollection):
            collection = AnswerCollection.at(collection)
        path = Path(path)
        wanted = {"kind": "answer-texts", "format": TEXTS_FORMAT,
                  "collection": {"kind": collection.kind, **file_fingerprint(collection.path)}}

        def build_into(tmp: Path) -> dict:
            n = 0
            with open(tmp / "texts.jsonl", "w", encoding="utf-8") as f:
                for doc in tqdm(iter_answer_texts(collection), desc="storing answer texts",
                                unit=" answers", disable=quiet, mininterval=0.5):
                    f.write(json.dumps(doc, ensure_ascii=False) + "\n")
                    n += 1
            if n == 0:
                raise InputError("the collection has no answer posts", path=collection.path)
            return {"num_docs": n}

        build_or_reuse(path, wanted, build_into, overwrite=overwrite)
        return cls(path)

    @classmethod
    def for_index(cls, index: AnswerIndex, quiet: bool = True) -> AnswerTexts:
        """The texts beside ``index`` (built from its collection on first use)."""
        return cls.build(collection_of(index), sibling(index, "texts"), quiet=quiet)


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


def model_key(model_path: str | Path) -> str:
    """A short, stable name for a model path (used in the dense index directory name).

    >>> len(model_key("/models/minilm"))
    10
    """
    return hashlib.sha1(str(Path(model_path).expanduser().resolve()).encode()).hexdigest()[:10]


class DenseAnswerIndex(pt.Artifact):
    """Passage vectors of the answers in a pyterrier-dr ``FlexIndex`` (needs ``mathir[neural]``).

    Open one with ``DenseAnswerIndex(path)`` or ``pt.Artifact.load(path)``; build with
    :meth:`build` or :meth:`for_index`. :func:`mathir.pipelines.neural.dense` retrieves
    from it.
    """

    ARTIFACT_TYPE = "dense_index"
    ARTIFACT_FORMAT = "mathir.answers"

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.manifest = read_manifest(self.path)
        if self.manifest is None or self.manifest.get("kind") != "dense-answers":
            raise InputError("not a mathir dense answer index (no manifest.json)", path=self.path)

    @property
    def passages(self) -> PassageSettings:
        """The passage settings the index was built with."""
        return PassageSettings(**self.manifest["passages"])

    @property
    def model_path(self) -> str:
        """The bi-encoder the passages were encoded with."""
        return self.manifest["model"]

    def flex(self):
        """The ``pyterrier_dr.FlexIndex`` holding the passage vectors."""
        from mathir.models import require_extra

        require_extra("neural", "the dense index")
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
        from mathir.models import load_bi_encoder

        encoder = encoder or load_bi_encoder(model_path, batch_size=batch_size)
        passages = passages or PassageSettings()
        path = Path(path)
        wanted = {"kind": "dense-answers", "format": DENSE_FORMAT,
                  "texts": texts.manifest["collection"], "model": str(encoder.model_path),
                  "passages": {"length": passages.length, "stride": passages.stride}}

        def build_into(tmp: Path) -> dict:
            import pyterrier_dr

            frame = texts.frame()
            cutter = passages.transformer()
            count = 0

            def records():
                # Cut 10,000 answers at a time, so passages never all sit in memory at once.
                nonlocal count
                for start in range(0, len(frame), 10_000):
                    docs = cutter(frame.iloc[start:start + 10_000])
                    count += len(docs)
                    for r in docs.itertuples(index=False):
                        yield {"docno": r.docno, "text": r.text}

            indexer = pyterrier_dr.FlexIndex(str(tmp / "flex"), verbose=not quiet)
            # FlexIndex stores the docno and vector of each record, in order.
            (encoder.st.doc_encoder(verbose=not quiet, batch_size=batch_size)
             >> indexer.indexer(mode="overwrite")).index(records())
            return {"num_docs": len(texts), "num_passages": count}

        build_or_reuse(path, wanted, build_into, overwrite=overwrite, pt_meta=artifact_meta(cls))
        return cls(path)

    @classmethod
    def for_index(cls, index: AnswerIndex, encoder=None, *, model_path: str | Path | None = None,
                  quiet: bool = True) -> DenseAnswerIndex:
        """The dense index beside ``index`` for this model (built on first use)."""
        from mathir.models import load_bi_encoder

        encoder = encoder or load_bi_encoder(model_path)
        texts = AnswerTexts.for_index(index, quiet=quiet)
        return cls.build(texts, sibling(index, f"dense-{model_key(encoder.model_path)}"),
                         encoder, quiet=quiet)
