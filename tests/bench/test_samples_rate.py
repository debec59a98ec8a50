"""bench.samples_rate's task list (bench/gpu_check.sh stage 4 reads it on the GPU machine)."""

from bench.samples_rate import runnable_tasks


def test_runnable_tasks_are_the_built_in_mujoco_tasks_without_a_teacher() -> None:
    tasks = runnable_tasks()
    assert {"quadruped-flat", "quadruped-rough", "humanoid-flat"} <= set(tasks)
    assert not any(t.startswith("menagerie:") or t.endswith(".py") for t in tasks)
    assert not any("distill" in t for t in tasks)


def test_one_row_runs_on_the_cpu() -> None:
    from bench.samples_rate import _parse, measure

    row = measure("quadruped-flat", 4, _parse(["--device", "cpu", "--iterations", "1", "--warmup", "0"]))
    assert row["samples_per_s"] > 0 and row["physics_samples_per_s"] > 0
