"""The engines alone for bench/mjbatch_side_by_side.py: the example's own model on mujoco 4.0's ``mujoco.batch``.

    python -m bench.mjbatch_engine --mjbatch-src PATH --go1 FILE [--num-envs 1024] [--physics-steps 20]
        # then commands on stdin: physics, setup, quit (bench/mjbatch_theirs.py's serve)

Builds the model with the example's own ``build_model`` (its solver, cone, timestep, feet-only contacts, servos)
under this venv's mujoco 4.0 (the example's ``from mjbatch import Batch`` is answered with ``mujoco.batch.Batch``,
which nothing here calls), and times ``engine_us`` of bench/mjbatch_theirs.py on ``mujoco.batch.Batch``: the same
model, states and code that the example's side times on mjbatch 0.1.4 (mujoco 3.14.0) with its ``engine`` command.
The two differ only in the engine, where the sides' own ``physics`` numbers differ in settings too.
"""

from __future__ import annotations

import argparse
import sys
import types
from typing import Any

import mujoco
import mujoco.batch
import numpy as np

from bench.mjbatch_theirs import engine_us, load_example, serve, setup_of, side_parser


class EngineSide:
    """The example's model on ``mujoco.batch.Batch`` with ``--num-envs`` worlds."""

    def __init__(self, args: argparse.Namespace):
        stand_in = types.ModuleType("mjbatch")
        stand_in.Batch = mujoco.batch.Batch  # type: ignore[attr-defined]
        sys.modules.setdefault("mjbatch", stand_in)
        self.adapted: list[str] = []
        self.ex = load_example(args.mjbatch_src, args.go1, self.adapted)
        self.n, self.steps = args.num_envs, args.physics_steps
        self.model = self.ex.build_model()
        self.batch = mujoco.batch.Batch(self.model, nsim=self.n)
        self.physics()  # warm-up

    def physics(self) -> dict[str, float]:
        return {"engine_us": engine_us(self.batch, self.n, self.ex.DECIMATION, self.steps)}

    def setup(self) -> dict[str, Any]:
        qpos, qvel = self.batch.bind("qpos"), self.batch.bind("qvel")
        data, counts = mujoco.MjData(self.model), []
        for sim in range(min(16, self.n)):
            data.qpos[:], data.qvel[:] = qpos[sim], qvel[sim]
            mujoco.mj_forward(self.model, data)
            counts.append(data.ncon)
        setup = setup_of(self.ex, self.model, int(self.batch.nthread), self.adapted, float(np.mean(counts)))
        return setup | {"steps_per_env": 0, "engine": "mujoco.batch"}


def main(argv: list[str] | None = None) -> None:
    serve(EngineSide(side_parser(__doc__).parse_args(argv)))


if __name__ == "__main__":
    main()
