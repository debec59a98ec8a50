"""The sag rule of the robot check under a cheaper solver: the gains' sag is judged at the converged solver; a
cheaper setting may add at most 3% to it (advice.sag_floor), and its advice then names the solver."""

from types import SimpleNamespace

import pytest

from envs.robot_check.advice import SAG, SOLVER_SAG, Findings, sag_floor, standing_findings, stands
from envs.robot_check.trials import Standing


def _stand(height: float) -> Standing:
    return Standing(seconds=4.0, base_height=height, min_height=height, tilt=0.01, diverged_at=None, contacts={},
                    at_limit={}, saturation={}, peak_effort={}, foot_drift={"FL": 0.002}, pose_error={"FL_calf": 0.1})


ROBOT = SimpleNamespace(spec=SimpleNamespace(base_height=0.31), held_joint_names=(),
                        model=SimpleNamespace(opt=SimpleNamespace(iterations=4, ls_iterations=6, timestep=0.005)))


def test_without_a_converged_trial_the_floor_is_the_share_of_base_height():
    assert sag_floor(ROBOT) == pytest.approx(SAG * 0.31)
    assert not stands(_stand(0.246), ROBOT)
    assert stands(_stand(0.25), ROBOT)


def test_a_cheaper_solver_may_add_three_percent_to_the_gains_sag():
    converged = _stand(0.251)
    assert sag_floor(ROBOT, converged) == pytest.approx(SOLVER_SAG * 0.251)
    assert stands(_stand(0.246), ROBOT, converged)
    assert not stands(_stand(0.240), ROBOT, converged)


def test_a_sag_of_the_gains_is_not_excused_by_the_converged_trial():
    converged = _stand(0.2)  # the gains' own sag: the floor stays SAG x base_height
    assert sag_floor(ROBOT, converged) == pytest.approx(SAG * 0.31)
    assert not stands(_stand(0.2), ROBOT, converged)


def test_the_advice_for_a_solver_sag_names_the_solver():
    f = Findings()
    standing_findings(ROBOT, _stand(0.23), [], [], (None, None), f, _stand(0.251))  # type: ignore[arg-type]
    assert len(f.problems) == 1 and "raise the solver iterations (now 4 / 6; at 100 / 50 it settles at 0.251 m)" \
        in f.problems[0], f.problems
