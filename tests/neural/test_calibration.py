"""The texts that calibrate an int8 OpenVINO export (mathir.neural.calibration): fixed, long
enough, and read from the embedded sample as the answer index reads it."""

from __future__ import annotations


def test_calibration_texts_are_fixed_and_reach_long_lengths():
    from mathir.neural.backends import CROSS_ENCODER
    from mathir.neural.calibration import calibration_texts

    texts = calibration_texts()
    assert texts == calibration_texts() and len(texts) == 300
    # longer than a 128-word passage (with formulas, well past 256 word pieces)
    assert max(len(t.split()) for t in texts) > 128
    pairs = calibration_texts(CROSS_ENCODER, n=20)
    assert all(len(p) == 2 and p[0] and p[1] for p in pairs)


def test_the_sample_answers_are_the_answer_index_texts():
    # calibration reads the sample itself (the encoders sit below indexing): the texts must
    # stay those of the answer index's reader, or the int8 exports would change
    from mathir.indexing.answer_collection import AnswerCollection
    from mathir.neural.calibration import sample_answers
    from mathir.samples import arqmath_sample

    answers = AnswerCollection.at(arqmath_sample().posts)
    titled, bare = sample_answers()
    assert titled == [a["text"] for a in answers.iter_answers(with_title=True)]
    assert bare == [a["text"] for a in answers.iter_answers(with_title=False)]
