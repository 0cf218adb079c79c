import os

import pandas as pd
import pytest

from mathir.indexing.answer_index import AnswerIndex
from mathir.pipelines import lexical
from mathir.pipelines.parallel import ParallelTopics, PipelineSpec
from mathir.samples import arqmath_sample
from mathir.topics.arqmath import read_task1_topics


def sample_pipeline(index_dir: str, name: str):
    """Module-level factory, importable by spawned workers."""
    return getattr(lexical, name)(AnswerIndex(index_dir))


@pytest.mark.parametrize("name", ["bm25", "tfidf"])
def test_processes_give_the_single_process_results(sample_index, name):
    topics = read_task1_topics(arqmath_sample().task1_topics)
    spec = PipelineSpec(sample_pipeline, (str(sample_index.path), name))
    single = spec.build().transform(topics)
    parallel = ParallelTopics(spec, workers=2).transform(topics)
    pd.testing.assert_frame_equal(single.reset_index(drop=True), parallel)


def test_one_worker_and_empty_topics(sample_index):
    topics = read_task1_topics(arqmath_sample().task1_topics)
    spec = PipelineSpec(sample_pipeline, (str(sample_index.path), "tfidf"))
    out = ParallelTopics(spec, workers=1).transform(topics)
    pd.testing.assert_frame_equal(spec.build().transform(topics).reset_index(drop=True), out)
    assert ParallelTopics(spec, workers=2).transform(topics.iloc[:0]).empty


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_unknown_backend():
    import gc

    with pytest.raises(ValueError, match="unknown backend"):
        ParallelTopics(PipelineSpec(sample_pipeline), backend="mpi")
    gc.collect()  # the half-made object's __del__ runs here and must not raise


@pytest.mark.slow  # among the longest: left out of the quick loop (-m 'not slow')
def test_ray_local_instance_gives_the_single_process_results(sample_index):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'mathir[cluster]')")
    topics = read_task1_topics(arqmath_sample().task1_topics)
    spec = PipelineSpec(sample_pipeline, (str(sample_index.path), "tfidf"))
    single = spec.build().transform(topics)
    environ = dict(os.environ)
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        parallel = ParallelTopics(spec, workers=2, backend="ray").transform(topics)
    finally:
        ray.shutdown()
        # ray.init leaves RAY_* variables and PYTHONBREAKPOINT (its debugger) in the
        # environment: the tests after this one must not inherit them
        os.environ.clear()
        os.environ.update(environ)
    pd.testing.assert_frame_equal(single.reset_index(drop=True), parallel)
