"""Training a cross-encoder reranker from judgments (needs ``mathir[neural]``).

The trainer is generic over ``(query, text, label)`` pairs, so any task can use it
(ARQMath answers, WorldTree facts, ...). :func:`pairs_from_qrels` makes those pairs:
positives are the judged-relevant documents, negatives the judged non-relevant ones
plus the best-ranked unjudged-or-non-relevant documents of a first stage (BM25: *hard*
negatives). :func:`train_cross_encoder` fine-tunes a sentence-transformers
``CrossEncoder`` (one logit; binary cross-entropy, or a listwise softmax over a
positive and its negatives), starting by default from the
packaged all-MiniLM-L6-v2 weights (a new classification head is added), on the GPU
when there is one.

The loop is written here (a few lines of torch) because sentence-transformers'
``CrossEncoderTrainer`` needs the ``datasets`` and ``accelerate`` packages, which the
extra does not otherwise need.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from mathir.errors import InputError
from mathir.storage import atomic_directory, write_manifest

PAIR_COLUMNS = ["qid", "query", "docno", "text", "label"]


def pairs_from_qrels(topics: pd.DataFrame, qrels: pd.DataFrame, texts: Mapping[str, str],
                     negatives: pd.DataFrame | None = None, rel: int = 1,
                     negatives_per_positive: int = 3, seed: int = 0) -> pd.DataFrame:
    """Training pairs ``(qid, query, docno, text, label)``, label 1 or 0.

    Positives: qrels with ``label >= rel``. Negatives: qrels with ``label < rel`` first,
    then the highest-ranked documents of ``negatives`` (a result frame, e.g. BM25's)
    that are not positives, up to ``negatives_per_positive`` per positive of a topic.
    Documents without text are skipped. ``texts`` with a ``subset(docnos)`` method
    (:class:`~mathir.indexing.text_store.AnswerTexts`) is read one topic's batch at a time.

    >>> topics = pd.DataFrame({"qid": ["1"], "query": ["q"]})
    >>> qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [2, 0]})
    >>> bm = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "c", "b"], "rank": [0, 1, 2]})
    >>> pairs_from_qrels(topics, qrels, {"a": "A", "b": "B", "c": "C"}, bm, rel=2)[["docno", "label"]].values.tolist()
    [['a', 1], ['b', 0], ['c', 0]]
    """
    rng = random.Random(seed)
    queries = dict(zip(topics["qid"].astype(str), topics["query"], strict=True))
    rows = []
    ranked: dict[str, list[str]] = {}
    if negatives is not None:
        neg = negatives.sort_values(["qid", "rank"], kind="stable")
        for qid, group in neg.groupby("qid", sort=False):
            ranked[str(qid)] = [str(d) for d in group["docno"]]
    subset = getattr(texts, "subset", None)  # AnswerTexts: texts on disk, fetched in batches
    for qid, group in qrels.groupby("qid", sort=True):
        qid = str(qid)
        if qid not in queries:
            continue
        found = texts
        if callable(subset):  # this topic's candidates in one batch, not a query per docno
            found = subset({str(d) for d in group["docno"]} | set(ranked.get(qid, ())))
        judged = {str(d): int(lab) for d, lab in zip(group["docno"], group["label"], strict=True)
                  if str(d) in found}
        pos = sorted(d for d, lab in judged.items() if lab >= rel)
        if not pos:
            continue
        judged_neg = sorted(d for d, lab in judged.items() if lab < rel)
        rng.shuffle(judged_neg)
        hard = [d for d in ranked.get(qid, []) if d in found and judged.get(d, -1) < rel
                and d not in judged_neg]
        negs = (judged_neg + hard)[:negatives_per_positive * len(pos)]
        # Interleave the classes so that a truncated pair list keeps both.
        both = itertools.zip_longest([(d, 1) for d in pos], [(d, 0) for d in negs])
        rows += [(qid, queries[qid], d, found[d], lab) for pair in both for x in pair
                 if x is not None for d, lab in [x]]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def _warmup_schedule(optimizer, total: int, warmup: float):
    """Learning rate rising linearly over ``warmup`` x ``total`` steps, then falling to 0."""
    import torch

    warm = max(1, int(warmup * total))
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: min((i + 1) / warm, max(0.0, (total - i) / max(1, total - warm))))


def _step(optimizer, schedule, loss, losses: list[float], bar) -> None:
    """One optimisation step; the progress bar shows the mean of the last 20 losses."""
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    losses.append(loss.item())
    bar.update()
    bar.set_postfix(loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}")


def _save_trained(model, out: str | Path, manifest: dict, losses: list[float],
                  started: float) -> Path:
    """Save a trained model and its manifest (plus the final loss and the training time)
    to ``out``, which appears whole or not at all."""
    out = Path(out)
    with atomic_directory(out) as tmp:
        model.save(str(tmp))
        write_manifest(tmp, manifest | {"final_loss": losses[-1] if losses else None,
                                        "seconds": round(time.perf_counter() - started, 1)})
    return out


def listwise_groups(pairs: pd.DataFrame, seed: int = 0) -> list[list[tuple[str, str]]]:
    """Each positive pair with ``k`` negative pairs of its query: ``[(query, text), ...]``,
    the positive first.

    ``k`` is the ratio of negatives to positives in ``pairs`` (at least 1); a query's
    negatives are dealt out to its positives in turn (reused when there are too few).
    Queries without a negative are left out.

    >>> p = pd.DataFrame({"qid": ["1"] * 3, "query": ["q"] * 3, "text": ["a", "b", "c"],
    ...                   "label": [1, 0, 0]})
    >>> listwise_groups(p)
    [[('q', 'a'), ('q', 'b'), ('q', 'c')]]
    """
    rng = random.Random(seed)
    positive = pairs["label"] > 0
    k = max(1, int(round((~positive).sum() / max(1, positive.sum()))))
    groups = []
    for _, rows in pairs.groupby("qid", sort=True):
        pos = list(zip(rows["query"][rows["label"] > 0], rows["text"][rows["label"] > 0],
                       strict=True))
        neg = list(zip(rows["query"][rows["label"] <= 0], rows["text"][rows["label"] <= 0],
                       strict=True))
        if not pos or not neg:
            continue
        rng.shuffle(neg)
        for j, p in enumerate(pos):
            groups.append([p] + [neg[(j * k + i) % len(neg)] for i in range(k)])
    return groups


def train_cross_encoder(pairs: pd.DataFrame, out: str | Path, base: str | Path | None = None,
                        epochs: int = 1, batch_size: int = 16, learning_rate: float = 2e-5,
                        max_length: int = 256, max_steps: int | None = None,
                        device: str | None = None, seed: int = 0, warmup: float = 0.1,
                        loss: str = "pointwise", quiet: bool = False) -> Path:
    """Fine-tune a CrossEncoder on ``pairs`` (columns query, text, label) and save it to ``out``.

    ``base`` is a local model directory or Hugging Face cache name (default: the
    packaged all-MiniLM-L6-v2). The learning rate rises linearly over the first
    ``warmup`` fraction of the steps and then falls linearly to 0 (the usual BERT
    schedule; the new classification head starts from random weights). ``max_steps``
    stops early (smoke runs). ``loss``: ``pointwise`` (binary cross-entropy on each
    pair) or ``listwise`` (softmax cross-entropy over a positive and its query's
    negatives, :func:`listwise_groups`: the "localized contrastive estimation" of Gao et
    al., 2021; ``batch_size`` still counts pairs). The saved
    directory loads with ``sentence_transformers.CrossEncoder(out)`` and
    :func:`mathir.pipelines.neural.cross_encoder_reranker`; ``out`` appears whole or not
    at all. Returns ``out``.
    """
    from mathir.models import offline, require_extra, resolve_model, torch_device

    require_extra("neural", "reranker training")
    offline()
    import torch
    from sentence_transformers import CrossEncoder

    if loss not in ("pointwise", "listwise"):
        raise InputError(f"unknown loss {loss!r}: pointwise or listwise")
    missing = {"query", "text", "label"} | ({"qid"} if loss == "listwise" else set())
    missing -= set(pairs.columns)
    if missing:
        raise InputError(f"training pairs lack column(s) {sorted(missing)}")
    if pairs.empty or pairs["label"].nunique() < 2:
        raise InputError("training needs positive and negative pairs (check the qrels and texts)")
    if loss == "listwise":
        data = listwise_groups(pairs, seed)
        if not data:
            raise InputError("listwise training needs queries with a positive and a negative")
        per_step = max(1, batch_size // len(data[0]))
    else:
        data = list(zip(pairs["query"], pairs["text"], pairs["label"].astype(float),
                        strict=True))
        per_step = batch_size
    base_path = resolve_model(base)
    device = torch_device(device)
    torch.manual_seed(seed)
    model = CrossEncoder(base_path, num_labels=1, max_length=max_length, device=device)
    net, tok = model.model, model.tokenizer
    net.train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate)
    bce = torch.nn.BCEWithLogitsLoss()
    rng = random.Random(seed)
    steps_per_epoch = (len(data) + per_step - 1) // per_step
    total = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    schedule = _warmup_schedule(optimizer, total, warmup)
    step = 0
    losses = []
    started = time.perf_counter()
    with tqdm(total=total, desc="training cross-encoder", unit=" steps", disable=quiet) as bar:
        for _ in range(epochs):
            rng.shuffle(data)
            for i in range(0, len(data), per_step):
                if step >= total:
                    break
                batch = data[i:i + per_step]
                flat = [pair for group in batch for pair in group] if loss == "listwise" else batch
                enc = tok([x[0] for x in flat], [x[1] for x in flat], padding=True,
                          truncation="longest_first", max_length=max_length,
                          return_tensors="pt").to(device)
                logits = net(**enc).logits.view(-1)
                if loss == "listwise":
                    # The positive is first in every group.
                    value = torch.nn.functional.cross_entropy(
                        logits.view(len(batch), -1),
                        torch.zeros(len(batch), dtype=torch.long, device=device))
                else:
                    value = bce(logits, torch.tensor([y for _, _, y in batch], device=device))
                _step(optimizer, schedule, value, losses, bar)
                step += 1
    net.eval()
    return _save_trained(model, out, {
        "kind": "mathir-cross-encoder", "base": base_path, "pairs": len(pairs),
        "positives": int((pairs["label"] > 0).sum()),
        "groups": len(data) if loss == "listwise" else None, "steps": step, "epochs": epochs,
        "batch_size": batch_size, "learning_rate": learning_rate, "warmup": warmup,
        "max_length": max_length, "loss": loss, "seed": seed, "device": device}, losses, started)


def index_texts(index) -> Mapping[str, str]:
    """docno -> text of an index's documents, as the models read them.

    An :class:`~mathir.indexing.answer_index.AnswerIndex` gives its answers with LaTeX
    (:class:`~mathir.indexing.text_store.AnswerTexts`); any other index must offer a
    ``document_texts()`` method.
    """
    from mathir.indexing.answer_index import AnswerIndex
    from mathir.indexing.text_store import AnswerTexts

    if isinstance(index, AnswerIndex):
        return AnswerTexts.for_index(index)
    if hasattr(index, "document_texts"):
        return index.document_texts()
    raise InputError(f"{type(index).__name__} offers no document texts to train on")


def shuffle_top(results: pd.DataFrame, depth: int, seed: int = 0) -> pd.DataFrame:
    """Each topic's top ``depth`` results in a random order (re-numbered ``rank``).

    Given to :func:`pairs_from_qrels` as ``negatives``, it draws negatives at random from
    the top ``depth`` instead of taking the very best-ranked ones (fewer unjudged
    relevant documents among them).

    >>> r = pd.DataFrame({"qid": ["1"] * 4, "docno": list("abcd"), "rank": [0, 1, 2, 3]})
    >>> sorted(shuffle_top(r, 3)["docno"])
    ['a', 'b', 'c']
    """
    top = results[results["rank"] < depth].sample(frac=1.0, random_state=seed)
    return top.assign(rank=top.groupby("qid").cumcount())


def task_training_pairs(task, datasets, rel: int | None = None, negatives_per_positive: int = 3,
                        first_stage: str = "bm25", max_pairs: int | None = None, seed: int = 0,
                        negative_depth: int | None = None, quiet: bool = False) -> pd.DataFrame:
    """Training pairs from a task's judged evaluations (``task.data(...)`` results).

    Hard negatives come from the task's ``first_stage`` pipeline (BM25): its best-ranked
    non-relevant documents, or, with ``negative_depth``, documents drawn at random from
    its top ``negative_depth`` (:func:`shuffle_top`). ``rel`` defaults to 2 when the
    judgments are graded above 1 (ARQMath: H and M are relevant), else 1. ``max_pairs``
    keeps a random sample of topics' pairs of about that size.
    """
    frames = []
    for data in datasets:
        if data.qrels is None:
            raise InputError(f"no qrels for {data.label}: cannot train on it", path=data.topics)
        topics = task.read_topics(data.topics)
        qrels = task.read_qrels(data.qrels)
        index = task.index(data, quiet=quiet)
        texts = index_texts(index)
        level = rel if rel is not None else (2 if qrels["label"].max() > 1 else 1)
        judged = topics[topics["qid"].isin(set(qrels["qid"]))]
        negatives = task.pipeline(first_stage, index).transform(judged)
        if negative_depth is not None:
            negatives = shuffle_top(negatives, negative_depth, seed)
        frames.append(pairs_from_qrels(judged, qrels, texts, negatives, rel=level,
                                       negatives_per_positive=negatives_per_positive, seed=seed))
    pairs = pd.concat(frames, ignore_index=True)
    if max_pairs is not None and len(pairs) > max_pairs:
        pairs = pairs.sample(n=max_pairs, random_state=seed).sort_index()
    return pairs


def false_negatives(qids: Sequence[str], texts: Sequence[str],
                    gold: Mapping[str, set[str]]) -> list[list[bool]]:
    """Which in-batch texts are gold for a row's query although they are not its target.

    Row ``i`` is the query of ``qids[i]`` and its target is ``texts[i]``; every other
    text of the batch is one of its negatives unless the query's ``gold`` set holds it
    (a fact that many explanations share, the positive of another query or another
    query's hard negative). Those cells are masked out of the in-batch softmax.

    >>> false_negatives(["q1", "q2"], ["a", "a", "b"], {"q1": {"a"}, "q2": {"a", "b"}})
    [[False, True, False], [True, False, True]]
    """
    return [[j != i and text in gold.get(qid, ()) for j, text in enumerate(texts)]
            for i, qid in enumerate(qids)]


def train_bi_encoder(pairs: pd.DataFrame, out: str | Path, base: str | Path | None = None,
                     epochs: int = 1, batch_size: int = 32, learning_rate: float = 2e-5,
                     scale: float = 20.0, max_length: int = 128, warmup: float = 0.1,
                     max_steps: int | None = None, device: str | None = None, seed: int = 0,
                     quiet: bool = False) -> Path:
    """Fine-tune a bi-encoder on ``pairs`` (query, text, label) with in-batch negatives.

    Each positive pair's query must rank its text above every other text of the batch
    (the other positives, and the negatives of the batch's queries: ``label`` 0 rows of
    the same ``qid``): softmax cross-entropy over ``scale`` x cosine, the loss of
    sentence-transformers' ``MultipleNegativesRankingLoss``. A batch never holds two
    positives of one query, and a text that is a positive of a query (another query's
    positive or hard negative that happens to be in its gold set too, such as a fact
    many explanations share) is masked out of that query's negatives rather than pushed
    away. Starts from the
    packaged all-MiniLM-L6-v2 by default (its mean pooling and normalisation kept);
    the saved directory loads with ``SentenceTransformer(out)`` and
    :func:`mathir.pipelines.neural.load_bi_encoder`. Returns ``out``.

    Written as a loop here for the same reason as :func:`train_cross_encoder`.
    """
    from mathir.models import offline, require_extra, resolve_model, torch_device

    require_extra("neural", "reranker training")
    offline()
    import torch
    from sentence_transformers import SentenceTransformer

    missing = {"qid", "query", "text", "label"} - set(pairs.columns)
    if missing:
        raise InputError(f"training pairs lack column(s) {sorted(missing)}")
    pos = pairs[pairs["label"] > 0]
    if pos.empty:
        raise InputError("training needs positive pairs (check the qrels and texts)")
    negatives: dict[str, list[str]] = {}
    for qid, text in zip(pairs.loc[pairs["label"] <= 0, "qid"], pairs.loc[pairs["label"] <= 0, "text"],
                         strict=True):
        negatives.setdefault(str(qid), []).append(text)
    base_path = resolve_model(base)
    device = torch_device(device)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = SentenceTransformer(base_path, device=device)
    model.max_seq_length = max_length
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    data = list(zip(pos["qid"].astype(str), pos["query"], pos["text"], strict=True))
    gold: dict[str, set[str]] = {}
    for qid, _, text in data:
        gold.setdefault(qid, set()).add(text)

    def batches() -> list[list[tuple[str, str, str]]]:
        # Greedy packing: a query appears at most once per batch.
        rng.shuffle(data)
        out, pending = [], list(data)
        while pending:
            batch, seen, rest = [], set(), []
            for row in pending:
                if len(batch) < batch_size and row[0] not in seen:
                    batch.append(row)
                    seen.add(row[0])
                else:
                    rest.append(row)
            out.append(batch)
            pending = rest
        return out

    planned = [batches() for _ in range(epochs)]
    total = sum(len(b) for b in planned)
    total = total if max_steps is None else min(max_steps, total)
    schedule = _warmup_schedule(optimizer, total, warmup)

    def embed(texts: list[str]):
        features = model.tokenize(texts)
        features = {k: v.to(device) if isinstance(v, torch.Tensor) else v
                    for k, v in features.items()}
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    step, losses = 0, []
    started = time.perf_counter()
    with tqdm(total=total, desc="training bi-encoder", unit=" steps", disable=quiet) as bar:
        for batch in itertools.chain.from_iterable(planned):
            if step >= total:
                break
            texts = [t for _, _, t in batch]
            hard = [rng.choice(negatives[q]) for q, _, _ in batch if negatives.get(q)]
            q_emb = embed([q for _, q, _ in batch])
            d_emb = embed(texts + hard)
            logits = scale * q_emb @ d_emb.T
            false = torch.tensor(false_negatives([q for q, _, _ in batch], texts + hard, gold),
                                 device=device)
            logits = logits.masked_fill(false, float("-inf"))
            loss = torch.nn.functional.cross_entropy(
                logits, torch.arange(len(batch), device=device))
            _step(optimizer, schedule, loss, losses, bar)
            step += 1
    model.eval()
    return _save_trained(model, out, {
        "kind": "mathir-bi-encoder", "base": base_path, "positives": len(data), "steps": step,
        "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate,
        "scale": scale, "max_length": max_length, "warmup": warmup, "seed": seed,
        "masked_false_negatives": True, "device": device}, losses, started)
