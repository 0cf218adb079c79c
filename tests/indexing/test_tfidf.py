import numpy as np
import pyterrier_pisa
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from mathir.indexing.answer_collection import AnswerCollection
from mathir.indexing.tfidf import stop_stems


def test_scores_are_scikit_learn_tfidf_cosines(sample, sample_index):
    # Independent recomputation: tokenise the answers like PISA, weight with scikit-learn.
    stops = stop_stems("porter2")
    docs = list(AnswerCollection.at(sample.posts).iter_answers(math_words=True))
    toks = [[t for t in pyterrier_pisa.tokenize(d["text"], "porter2") if t not in stops] for d in docs]
    cv = CountVectorizer(analyzer=lambda x: x)
    tfidf = TfidfTransformer().fit(cv.fit_transform(toks))
    matrix = tfidf.transform(cv.transform(toks))
    query = "derivative of x power x using the chain rule"
    qtoks = [t for t in pyterrier_pisa.tokenize(query, "porter2") if t not in stops]
    expected = (matrix @ tfidf.transform(cv.transform([qtoks])).T).toarray().ravel()

    docnos, scores = sample_index.tfidf.search(query, 10)
    by_docno = {d["docno"]: i for i, d in enumerate(docs)}
    assert len(docnos) == 10
    np.testing.assert_allclose(scores, [expected[by_docno[d]] for d in docnos], rtol=1e-5)
    np.testing.assert_allclose(scores[0], expected.max(), rtol=1e-5)
    assert list(scores) == sorted(scores, reverse=True)


def test_query_without_known_terms_returns_nothing(sample_index):
    docnos, scores = sample_index.tfidf.search("zzzqqq the of", 10)
    assert len(docnos) == 0 and len(scores) == 0
