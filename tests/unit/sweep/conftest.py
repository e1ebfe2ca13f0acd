import pytest
from standin import StandInEvaluator, Swept, small_data_file, tiny_spec_file

from synthflow.loader import load_spec
from synthflow.sweep.job import run_sweep


@pytest.fixture(scope="package")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    """One real sweep on a local Dask cluster of two workers (12 configs x 3 repeats)."""
    d = tmp_path_factory.mktemp("sweep")
    spec = load_spec(tiny_spec_file(d))
    data = small_data_file(d)
    store = d / "results.db"
    summary = run_sweep(
        spec,
        data,
        store,
        repeats=3,
        workers=2,
        seed=3,
        evaluator=StandInEvaluator(),
        show_progress=False,
    )
    return Swept(spec=spec, data=data, store=store, summary=summary)
