import pytest

from mathir.errors import InputError
from mathir.indexing.fact_index import read_tablestore
from mathir.qrels.worldtree import missing_gold, parse_explanation, read_qrels
from mathir.samples import worldtree_sample
from tests.conftest import real_path
from tests.topics.test_worldtree_topics import HEADER, row


def test_repeated_uid_counts_once_first_position_last_role(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text(HEADER + "\n" + row("Q1", "x (A) a (B) b", expl="AA|CENTRAL bb|LEXGLUE aa|GROUNDING") + "\n")
    with pytest.warns(UserWarning, match="1 repeated gold UID"):
        q = read_qrels(p)
    assert q[["docno", "role"]].values.tolist() == [["aa", "GROUNDING"], ["bb", "LEXGLUE"]]
    assert set(q.columns) >= {"qid", "docno", "label", "role", "question", "answer"}


def test_bad_items_and_no_gold(tmp_path):
    with pytest.raises(InputError, match="not uid|ROLE"):
        parse_explanation("abc|CENTRAL nope")
    p = tmp_path / "q.tsv"
    p.write_text(HEADER + "\n" + row("Q1", "x (A) a (B) b", expl="") + "\n")
    with pytest.raises(InputError, match="no question has a gold explanation"):
        read_qrels(p)


def test_sample_gold_is_in_the_sample_tablestore():
    s = worldtree_sample()
    for split in ("Train", "Dev", "Test"):
        q = read_qrels(s.questions(split))
        assert missing_gold(q, read_tablestore(s.tables).facts["docno"]).empty


@pytest.mark.realdata
def test_real_missing_gold_uids_are_reported():
    import warnings

    facts = read_tablestore(real_path("worldtree", "annotation",
                                      "expl-tablestore-export-2017-08-25-230344", "tables"), warn=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train = read_qrels(real_path("worldtree", "questions", "ARC-Elementary-QC+EXPL-Train.tsv"))
        dev = read_qrels(real_path("worldtree", "questions", "ARC-Elementary-QC+EXPL-Dev.tsv"))
    missing = missing_gold(train, facts.facts["docno"])
    assert sorted(missing["qid"]) == ["MDSA_2007_5_50", "Mercury_SC_400189", "Mercury_SC_415072"]
    assert missing_gold(dev, facts.facts["docno"]).empty  # "Good|CENTRAL" matches once lower-cased
    assert dev["qid"].nunique() == 226
    assert dict(dev["role"].value_counts())["NE"] == 4  # the files' typo, kept as written
