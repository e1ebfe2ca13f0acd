"""``synthflow plan``'s stage progress ([ux] 4): each tenth of a stage, with an ETA."""

from __future__ import annotations

from synthflow.plan._stages import Stage


def test_a_stage_reports_each_tenth_with_the_time_left_at_its_pace():
    now = [0.0]
    lines: list[str] = []
    stage = Stage(lines.append, "regression fit per candidate (runs)", 40, clock=lambda: now[0])
    for _ in range(40):
        now[0] += 3.0  # 3 s per run: 120 s in all
        stage.step()
    stage.done()
    assert lines[0] == "regression fit per candidate (runs): started (40 steps)"
    tenths = [line for line in lines if "% (" in line]
    assert [line.split(": ")[1].split(" ")[0] for line in tenths] == [
        f"{p}%" for p in range(10, 100, 10)
    ]
    # At 10% (4 runs, 12 s) the pace says 36 runs x 3 s = 108 s are left.
    assert tenths[0].endswith("10% (4/40), 12s so far, about 1m48s left")
    assert lines[-1] == "regression fit per candidate (runs): done in 2m00s"


def test_a_stage_of_few_steps_reports_each_step_once():
    lines: list[str] = []
    stage = Stage(lines.append, "search (modes)", 3, clock=lambda: 0.0)
    for _ in range(3):
        stage.step()
    stage.done()
    # 1/3 -> 30%, 2/3 -> 60%; the last step is the done line.
    assert [line for line in lines if "%" in line] == [
        "search (modes): 30% (1/3), 0s so far, about 0s left",
        "search (modes): 60% (2/3), 0s so far, about 0s left",
    ]
    assert len(lines) == 4
