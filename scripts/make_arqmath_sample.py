"""Write the small ARQMath-format sample collection used by mathir's tests and examples.

The content (questions, answers, topics, relevance judgments) lives in text files under
``scripts/arqmath_sample/`` (see its README.md for the format); this script only reads them,
numbers posts and formulas, renders the ARQMath files (Posts.V1.3.xml, the v3 LaTeX formula
index, Task 1/Task 2 topics, TREC qrels) and checks what it wrote. It is deterministic and
needs only the standard library and PyYAML:

    python scripts/make_arqmath_sample.py [--out DIR] [--data DIR]

Text markup in the content files: paragraphs are separated by blank lines and become ``<p>``
elements (unless they start with a block tag such as ``<ol>``); each line is stripped and the
lines of a paragraph are joined with a space, except that a line ending in ``\\\\`` (a LaTeX line
break) keeps its newline, so ``align*`` environments span several lines as on the real site.
``$...$`` and ``$$...$$`` become math-container spans with fresh formula ids.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

from sample_data import (
    ANY_LIST,
    TEXT,
    Map,
    SampleDataError,
    check_fields,
    generator_args,
    is_text,
    list_of,
    load_yaml,
    run_cli,
)

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent / "mathir/samples/arqmath"
DATA_DIR = HERE / "arqmath_sample"

FIRST_POST_ID = 1001
FIRST_FORMULA_ID = 20001
FIRST_VISUAL_ID = 70001
FIRST_TOPIC_THREAD_ID = 5000001
BASE_DATE = datetime(2015, 1, 5, 8, 0, 0)
BLOCK_TAGS = ("<ol>", "<ul>", "<blockquote>", "<pre>")
FORMULA_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
SPAN_RE = re.compile(r'<span class="math-container" id="([^"]+)">(\$\$?)(.*?)\2</span>', re.S)
TSV_HEADER = "id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\tformula"
TOPIC_TSV_HEADER = "id\ttopic_id\tthread_id\ttype\tformula"


# ---------------------------------------------------------------------------
# Reading the content files
# ---------------------------------------------------------------------------


def _is_rel(value: object) -> bool:
    return type(value) is int and 0 <= value <= 3  # bool is an int subclass: excluded


def _is_tag(value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[^\s<>,]+", value) is not None


TAGS = list_of(_is_tag, "tags (no spaces, '<', '>' or ',')", nonempty=False)
KEYS = list_of(is_text, "answer keys ('question-key.j')", nonempty=False)
RELS = list_of(_is_rel, "relevance grades 0-3")
REL = (_is_rel, "a relevance grade 0-3")
ANSWERS = list_of(is_text, "answer texts")
RELATED = (
    lambda v: isinstance(v, dict) and all(_is_rel(r) for r in v.values()),
    "a mapping from answer key ('question-key.j') to a relevance grade 0-3",
)


def load_subjects(data_dir: Path) -> list[tuple]:
    """Read ``threads/*.yaml`` (in file-name order) as (subject, tags, questions) tuples,
    a question being (key, title, extra tags, body, [answers])."""
    files = sorted((data_dir / "threads").glob("*.yaml"))
    if not files:
        raise SampleDataError("no threads/*.yaml files", data_dir)
    subjects = []
    seen: dict[str, str] = {}
    for path in files:
        top = load_yaml(path)
        doc = check_fields(
            top, {"subject": TEXT, "tags": TAGS, "questions": ANY_LIST}, "subject file", path
        )
        questions = []
        for q in doc["questions"]:
            q = check_fields(
                q,
                {"key": TEXT, "title": TEXT, "tags": TAGS, "body": TEXT, "answers": ANSWERS},
                "question",
                doc,
            )
            if q["key"] in seen:
                raise SampleDataError(
                    f"question key {q['key']!r} also used in {seen[q['key']]}", path, q.line
                )
            seen[q["key"]] = f"{path.name}:{q.line}"
            questions.append((q["key"], q["title"], q["tags"], q["body"], q["answers"]))
        subjects.append((doc["subject"], doc["tags"], questions))
    return subjects


def load_topics(data_dir: Path) -> list[Map]:
    """Read ``topics.yaml``: topic mappings, ``formula_rels`` turned into (latex, rels) pairs
    (an int: every instance; a list: the first instances in collection order)."""
    path = data_dir / "topics.yaml"
    top = load_yaml(path)
    if not isinstance(top, list) or not top:
        raise SampleDataError("must be a non-empty list of topics", path)
    topics = []
    for topic in top:
        topic = check_fields(
            topic,
            {
                "dup": TEXT,
                "tags": TAGS,
                "title": TEXT,
                "formula": TEXT,
                "body": TEXT,
                "dup_rels": RELS,
                "related": RELATED,
                "unrelated": KEYS,
                "formula_rels": ANY_LIST,
            },
            "topic",
            path,
        )
        pairs = []
        for judged in topic["formula_rels"]:
            judged = check_fields(
                judged, {"latex": TEXT, "rel?": REL, "first?": RELS}, "formula judgment", topic
            )
            if ("rel" in judged) == ("first" in judged):
                raise SampleDataError(
                    "formula judgment needs exactly one of 'rel' (every "
                    "instance) or 'first' (the first instances)",
                    judged.path,
                    judged.line,
                )
            pairs.append((judged["latex"], judged.get("rel", judged.get("first"))))
        topic["formula_rels"] = pairs
        topic["related"] = list(topic["related"].items())
        topics.append(topic)
    return topics


def _check(ok: bool, message: str, topic: Map) -> None:
    if not ok:
        raise SampleDataError(message, topic.path, topic.line)


# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------


@dataclass
class Formula:
    id: str
    post_id: int
    thread_id: int
    type: str
    latex: str
    visual_id: int = 0


@dataclass
class Post:
    id: int
    post_type: int
    parent_id: int
    key: str
    subject: str
    title: str
    body: str
    tags: list[str]
    created: datetime
    score: int
    owner: int
    view_count: int = 0
    answer_ids: list[int] = field(default_factory=list)
    accepted: int | None = None


def tsv_field(latex: str) -> str:
    """A formula as one TSV field (tabs and line breaks become spaces).

    >>> tsv_field("a=1,\\tb=2")
    'a=1, b=2'
    """
    return latex.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def visual_key(latex: str) -> str:
    """Formulas with the same key share a visual id (here: equal up to whitespace).

    >>> visual_key("x^2 + 1") == visual_key("x^2+1")
    True
    """
    return re.sub(r"\s+", "", latex)


def to_html(text: str, sep: str = "\n\n", end: str = "\n") -> str:
    """Turn blank-line separated paragraphs into HTML; lines ending in \\\\ keep their newline.

    >>> to_html("  First line\\n  continued.\\n\\n  <ol><li>item</li></ol>\\n")
    '<p>First line continued.</p>\\n\\n<ol><li>item</li></ol>\\n'
    """
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.strip().splitlines()]
        joined = lines[0]
        for prev, line in zip(lines[:-1], lines[1:], strict=True):
            joined += ("\n" if prev.endswith("\\\\") else " ") + line
        if not joined.startswith(BLOCK_TAGS):
            joined = f"<p>{joined}</p>"
        parts.append(joined)
    return sep.join(parts) + end


def render_math(text: str, next_id, sink: list[tuple[str, str]]) -> str:
    """Replace $...$ / $$...$$ by math-container spans; record (id, latex) in sink.

    >>> sink = []
    >>> render_math("If $a<b$ then $$b>a$$", iter(["7", "8"]).__next__, sink)
    'If <span class="math-container" id="7">$a&lt;b$</span> then \
<span class="math-container" id="8">$$b&gt;a$$</span>'
    >>> sink
    [('7', 'a<b'), ('8', 'b>a')]
    """

    def repl(match: re.Match) -> str:
        display = match.group(1) is not None
        latex = match.group(1) if display else match.group(2)
        fid = next_id()
        sink.append((fid, latex))
        delim = "$$" if display else "$"
        return f'<span class="math-container" id="{fid}">{delim}{escape(latex)}{delim}</span>'

    return FORMULA_RE.sub(repl, text)


def attr(value: str) -> str:
    return '"' + escape(value, {'"': "&quot;", "\n": "&#xA;"}) + '"'


def text_node(value: str) -> str:
    return escape(value, {'"': "&quot;"})


def fmt_date(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def build_collection(subjects: list[tuple]):
    posts: list[Post] = []
    formulas: list[Formula] = []
    by_key: dict[str, Post] = {}
    counter = iter(range(FIRST_FORMULA_ID, 10**9))

    def next_formula_id() -> str:
        return str(next(counter))

    post_id = FIRST_POST_ID
    qi = 0
    for subject, base_tags, questions in subjects:
        for qkey, title, extra_tags, body, answers in questions:
            created = BASE_DATE + timedelta(
                days=4 * qi,
                hours=(qi * 7) % 11,
                minutes=(qi * 13) % 60,
                seconds=(qi * 17) % 60,
                milliseconds=(qi * 137) % 1000,
            )
            score = 3 + (qi * 7) % 25
            sink: list[tuple[str, str]] = []
            title_html = render_math(title, next_formula_id, sink)
            formulas += [Formula(f, post_id, post_id, "title", x) for f, x in sink]
            sink = []
            body_html = render_math(to_html(body), next_formula_id, sink)
            formulas += [Formula(f, post_id, post_id, "question", x) for f, x in sink]
            question = Post(
                id=post_id,
                post_type=1,
                parent_id=0,
                key=qkey,
                subject=subject,
                title=title_html,
                body=body_html,
                tags=base_tags + extra_tags,
                created=created,
                score=score,
                owner=100 + (qi * 37) % 400,
                view_count=50 + (qi * 97) % 2000 + 20 * score,
            )
            posts.append(question)
            by_key[qkey] = question
            post_id += 1
            for j, answer in enumerate(answers):
                sink = []
                answer_html = render_math(to_html(answer), next_formula_id, sink)
                formulas += [Formula(f, post_id, question.id, "answer", x) for f, x in sink]
                post = Post(
                    id=post_id,
                    post_type=2,
                    parent_id=question.id,
                    key=f"{qkey}.{j}",
                    subject=subject,
                    title="",
                    body=answer_html,
                    tags=[],
                    created=created
                    + timedelta(
                        minutes=(j + 1) * (23 + (qi * (j + 1) * 31) % 300),
                        seconds=(qi * 11 + j * 7) % 60,
                        milliseconds=(qi * 31 + j * 97) % 1000,
                    ),
                    score=max(0, 2 + (qi * 5 + j * 3) % 14 - 3 * j),
                    owner=500 + (qi * 53 + j * 29) % 700,
                )
                posts.append(post)
                by_key[post.key] = post
                question.answer_ids.append(post_id)
                post_id += 1
            if qi % 5 != 3:
                pick = 1 if (qi % 7 == 2 and len(answers) > 1) else 0
                question.accepted = question.answer_ids[pick]
            qi += 1

    vids: dict[str, int] = {}
    for formula in formulas:
        key = visual_key(formula.latex)
        if key not in vids:
            vids[key] = FIRST_VISUAL_ID + len(vids)
        formula.visual_id = vids[key]
    return posts, formulas, by_key, vids


def posts_xml(posts: list[Post]) -> str:
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<posts>"]
    for post in posts:
        if post.post_type == 1:
            fields = [
                ("Id", str(post.id)),
                ("PostTypeId", "1"),
                ("CreationDate", fmt_date(post.created)),
                ("Score", str(post.score)),
                ("ViewCount", str(post.view_count)),
                ("Body", post.body),
                ("OwnerUserId", str(post.owner)),
                ("Title", post.title),
                ("Tags", "".join(f"<{tag}>" for tag in post.tags)),
                ("AnswerCount", str(len(post.answer_ids))),
                ("CommentCount", "0"),
            ]
            if post.accepted is not None:
                fields.append(("AcceptedAnswerId", str(post.accepted)))
        else:
            fields = [
                ("Id", str(post.id)),
                ("PostTypeId", "2"),
                ("ParentId", str(post.parent_id)),
                ("CreationDate", fmt_date(post.created)),
                ("Score", str(post.score)),
                ("Body", post.body),
                ("OwnerUserId", str(post.owner)),
                ("CommentCount", "0"),
            ]
        attrs = " ".join(f"{name}={attr(value)}" for name, value in fields)
        lines.append(f"  <row {attrs} />")
    lines.append("</posts>")
    return "\n".join(lines) + "\n"


def formulas_tsv(formulas: list[Formula]) -> str:
    rows = [TSV_HEADER]
    for f in formulas:
        cols = [
            f.id,
            f.post_id,
            f.thread_id,
            f.type,
            "",
            f.visual_id,
            f.visual_id,
            "",
            tsv_field(f.latex),
        ]
        rows.append("\t".join(str(c) for c in cols))
    return "\n".join(rows) + "\n"


def build_topics(topics: list[Map]):
    counter = iter(range(1, 10**6))

    def next_qid() -> str:
        return f"q_{next(counter)}"

    rendered = []
    topic_formulas = []
    for k, topic in enumerate(topics, start=1):
        thread_id = FIRST_TOPIC_THREAD_ID + k - 1
        sink: list[tuple[str, str]] = []
        title = render_math(topic["title"], next_qid, sink)
        topic_formulas += [(q, f"A.{k}", thread_id, "title", x) for q, x in sink]
        n_title = len(sink)
        question = render_math(to_html(topic["body"], sep=" ", end=" "), next_qid, sink)
        topic_formulas += [(q, f"A.{k}", thread_id, "body", x) for q, x in sink[n_title:]]
        matches = [(q, x) for q, x in sink if x == topic["formula"]]
        _check(
            len(matches) == 1,
            f"the query formula {topic['formula']!r} occurs "
            f"{len(matches)} times in the topic's title and body (must be once)",
            topic,
        )
        rendered.append((k, title, question, topic["tags"], matches[0]))
    return rendered, topic_formulas


def topics_xml(rendered, task: int) -> str:
    lines = ['<?xml version="1.0" ?>', "<Topics>"]
    for k, title, question, tags, (qid, latex) in rendered:
        prefix = "A" if task == 1 else "B"
        lines.append(f'   <Topic number="{prefix}.{k}">')
        if task == 2:
            lines.append(f"      <Formula_Id>{qid}</Formula_Id>")
            lines.append(f"      <Latex>{text_node(latex)}</Latex>")
        lines.append(f"      <Title>{text_node(title)}</Title>")
        lines.append(f"      <Question>{text_node(question)}</Question>")
        lines.append(f"      <Tags>{','.join(tags)}</Tags>")
        lines.append("   </Topic>")
    lines.append("</Topics>")
    return "\n".join(lines) + "\n"


def build_qrels(topics: list[Map], by_key, formulas, vids):
    task1 = []
    task2 = []
    for k, topic in enumerate(topics, start=1):
        _check(topic["dup"] in by_key, f"dup: no question {topic['dup']!r}", topic)
        dup = by_key[topic["dup"]]
        _check(dup.post_type == 1, f"dup: {topic['dup']!r} is not a question key", topic)
        judged = {}
        _check(
            len(topic["dup_rels"]) == len(dup.answer_ids),
            f"dup_rels has {len(topic['dup_rels'])} grades, {topic['dup']!r} has "
            f"{len(dup.answer_ids)} answers",
            topic,
        )
        for answer_id, rel in zip(dup.answer_ids, topic["dup_rels"], strict=True):
            judged[answer_id] = rel
        for key, rel in topic["related"]:
            post = by_key.get(key)
            _check(
                post is not None and post.post_type == 2 and post.subject == dup.subject,
                f"related: {key!r} is not an answer key ('question-key.j') of the "
                f"subject {dup.subject!r}",
                topic,
            )
            judged[post.id] = rel
        for key in topic["unrelated"]:
            post = by_key.get(key)
            _check(
                post is not None and post.post_type == 2 and post.subject != dup.subject,
                f"unrelated: {key!r} is not an answer key ('question-key.j') outside the "
                f"subject {dup.subject!r}",
                topic,
            )
            judged[post.id] = 0
        _check(8 <= len(judged) <= 15, f"{len(judged)} answers judged (must be 8-15)", topic)
        task1 += [(f"A.{k}", pid, rel) for pid, rel in sorted(judged.items())]

        instances: dict[str, list[Formula]] = {}
        for f in formulas:
            instances.setdefault(visual_key(f.latex), []).append(f)
        fjudged = {}
        for latex, rels in topic["formula_rels"]:
            found = instances.get(visual_key(latex), [])
            _check(bool(found), f"formula_rels: {latex!r} occurs nowhere in the collection", topic)
            if isinstance(rels, int):
                _check(
                    len(found) <= 4,
                    f"formula_rels: {latex!r} occurs {len(found)} times; "
                    "judge the first ones with 'first: [...]'",
                    topic,
                )
                rels = [rels] * len(found)
            _check(
                len(found) >= len(rels),
                f"formula_rels: {latex!r} has {len(rels)} grades "
                f"but occurs only {len(found)} times",
                topic,
            )
            for f, rel in zip(found[: len(rels)], rels, strict=True):
                fjudged[f.id] = (f, rel)
        _check(6 <= len(fjudged) <= 12, f"{len(fjudged)} formulas judged (must be 6-12)", topic)
        query_vid = vids.get(visual_key(topic["formula"]))
        same = [f for f, _ in fjudged.values() if f.visual_id == query_vid]
        _check(
            1 <= len(same) <= 2,
            f"the query formula is judged {len(same)} times (must be 1-2)",
            topic,
        )
        task2 += [
            (f"B.{k}", f, rel) for f, rel in sorted(fjudged.values(), key=lambda t: int(t[0].id))
        ]
    return task1, task2


def qrels_text(rows) -> str:
    return "".join(f"{topic}\t0\t{doc}\t{rel}\n" for topic, doc, rel in rows)


def self_check(out: Path) -> dict:
    stats = {}
    root = ET.parse(out / "Posts.V1.3.xml").getroot()
    rows = root.findall("row")
    questions = {r.get("Id"): r for r in rows if r.get("PostTypeId") == "1"}
    answers = {r.get("Id"): r for r in rows if r.get("PostTypeId") == "2"}
    assert len(questions) == 80 and len(answers) == 250
    per_question = {qid: 0 for qid in questions}
    for row in answers.values():
        per_question[row.get("ParentId")] += 1
    assert all(1 <= n <= 5 for n in per_question.values())
    for qid, row in questions.items():
        assert int(row.get("AnswerCount")) == per_question[qid]
        acc = row.get("AcceptedAnswerId")
        assert acc is None or answers[acc].get("ParentId") == qid
    ids = [int(r.get("Id")) for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    texts = [r.get("Body") for r in rows] + [r.get("Title") for r in questions.values()]
    assert len(set(texts)) == len(texts), "every title and body must be distinct"

    spans = {}
    for row in rows:
        for field_name, ftype in (("Title", "title"), ("Body", None)):
            value = row.get(field_name)
            if value is None:
                continue
            kind = ftype or ("question" if row.get("PostTypeId") == "1" else "answer")
            thread = row.get("Id") if row.get("PostTypeId") == "1" else row.get("ParentId")
            ET.fromstring(f"<div>{value}</div>")  # the HTML itself is well formed
            outside = SPAN_RE.sub("", value)
            assert "$" not in outside and "\\begin" not in outside, (row.get("Id"), outside)
            for fid, _delim, latex in SPAN_RE.findall(value):
                assert fid not in spans, fid
                spans[fid] = (row.get("Id"), thread, kind, tsv_field(html.unescape(latex)))

    lines = (out / "latex_representation_v3.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[0] == TSV_HEADER and lines[-1] == ""
    tsv = {}
    vid_count: dict[str, int] = {}
    for line in lines[1:-1]:
        fid, post, thread, kind, comment, old_vid, vid, issue, latex = line.split("\t")
        assert comment == "" and issue == "" and old_vid == vid
        tsv[fid] = (post, thread, kind, latex)
        vid_count[vid] = vid_count.get(vid, 0) + 1
    assert set(tsv) == set(spans), "span ids and TSV ids differ"
    for fid, value in spans.items():
        assert tsv[fid] == value, (fid, tsv[fid], value)
    fid_to_vid = {line.split("\t")[0]: line.split("\t")[6] for line in lines[1:-1]}
    stats["formulas"] = len(tsv)
    stats["visual_ids"] = len(vid_count)
    stats["visual_ids_2plus"] = sum(1 for n in vid_count.values() if n >= 2)
    assert stats["visual_ids_2plus"] >= 30

    topic_ids = {}
    for task in (1, 2):
        troot = ET.parse(out / f"Topics_Task{task}_sample.xml").getroot()
        topics = troot.findall("Topic")
        assert [t.get("number") for t in topics] == [f"{'AB'[task - 1]}.{k}" for k in range(1, 11)]
        for topic in topics:
            text = topic.findtext("Title") + topic.findtext("Question")
            ET.fromstring(f"<div>{text}</div>")
            assert "$" not in SPAN_RE.sub("", text)
            found = SPAN_RE.findall(text)
            for qid, _delim, latex in found:
                topic_ids[qid] = html.unescape(latex)
            if task == 2:
                qid = topic.findtext("Formula_Id")
                assert topic_ids[qid] == topic.findtext("Latex")
    tlines = (out / "topic_formulas_latex.tsv").read_text(encoding="utf-8").split("\n")
    assert tlines[0] == TOPIC_TSV_HEADER
    assert {line.split("\t")[0] for line in tlines[1:-1]} == set(topic_ids)

    def read_qrels(name):
        text = (out / name).read_text(encoding="utf-8")
        return [line.split("\t") for line in text.splitlines()]

    q1 = read_qrels("qrels_task1.tsv")
    for _topic, zero, doc, rel in q1:
        assert zero == "0" and doc in answers and rel in "0123"
    for k in range(1, 11):
        rels = [int(r[3]) for r in q1 if r[0] == f"A.{k}"]
        assert 8 <= len(rels) <= 15 and sum(r >= 2 for r in rels) >= 1
    single = [k for k in range(1, 11) if sum(int(r[3]) >= 2 for r in q1 if r[0] == f"A.{k}") == 1]
    assert len(single) == 2, single
    q2f = read_qrels("qrels_task2_formula_id.tsv")
    q2v = read_qrels("qrels_task2_visual_id.tsv")
    expected: dict[tuple[str, str], int] = {}
    for topic, zero, fid, rel in q2f:
        assert zero == "0" and fid in tsv
        key = (topic, fid_to_vid[fid])
        expected[key] = max(expected.get(key, 0), int(rel))
    assert {(t, v): int(r) for t, _, v, r in q2v} == expected
    assert len(q2v) == len(expected)
    stats.update(qrels_task1=len(q1), qrels_task2_formula=len(q2f), qrels_task2_visual=len(q2v))
    stats["single_relevant_topics"] = [f"A.{k}" for k in single]
    assert (out / "Posts.V1.3.xml").stat().st_size < 300_000
    return stats


def generate(out: Path, data_dir: Path = DATA_DIR) -> dict[str, str]:
    """Read the content files in ``data_dir``, write the sample files into ``out`` and check
    them; return {file name: content}."""
    subjects = load_subjects(data_dir)
    topics = load_topics(data_dir)
    readme = (data_dir / "sample_README.md").read_text(encoding="utf-8")
    posts, formulas, by_key, vids = build_collection(subjects)
    rendered, topic_formulas = build_topics(topics)
    task1, task2 = build_qrels(topics, by_key, formulas, vids)

    visual = {}
    for topic, f, rel in task2:
        key = (topic, f.visual_id)
        visual[key] = max(visual.get(key, 0), rel)

    files = {
        "Posts.V1.3.xml": posts_xml(posts),
        "latex_representation_v3.tsv": formulas_tsv(formulas),
        "Topics_Task1_sample.xml": topics_xml(rendered, 1),
        "Topics_Task2_sample.xml": topics_xml(rendered, 2),
        "topic_formulas_latex.tsv": TOPIC_TSV_HEADER
        + "\n"
        + "".join(f"{q}\t{t}\t{th}\t{ty}\t{tsv_field(x)}\n" for q, t, th, ty, x in topic_formulas),
        "qrels_task1.tsv": qrels_text(task1),
        "qrels_task2_formula_id.tsv": qrels_text((t, f.id, r) for t, f, r in task2),
        "qrels_task2_visual_id.tsv": qrels_text(
            (t, v, r)
            for (t, v), r in sorted(visual.items(), key=lambda kv: (int(kv[0][0][2:]), kv[0][1]))
        ),
        "README.md": readme,
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (out / name).write_text(content, encoding="utf-8", newline="\n")
    return files


def main(argv: list[str] | None = None) -> None:
    args = generator_args(__doc__, OUT_DIR, DATA_DIR, argv)
    files = run_cli(lambda: generate(args.out, args.data))
    stats = self_check(args.out)
    for name in files:
        print(f"{name}\t{(args.out / name).stat().st_size} bytes")
    for key, value in stats.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
