"""Reproduce a MuJoCo Warp heightfield contact of impossible depth from one saved quadruped-rough world (issue 30).

The state (qpos, qvel, warm start, controls and the world's randomized model fields) was captured, on Warp's
CPU device, just before the control step in which one world of `quadruped-rough` (128 worlds, random actions, a
push every second) got a foot-heightfield contact 1.85 m deep and was thrown off at 134 rad/s. This script puts
that one world into MuJoCo C and into MuJoCo Warp (one world) and steps both substep by substep, printing the
deepest contact (its geoms and depth) and the largest speed after each:

    python -m tools.experiments.warp_hfield_repro  [--device cpu|cuda]  [--state fault_injection/warp_hfield_state.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mujoco
import numpy as np

from fault_injection.warp_hfield import STATE, load_state, scene


def deepest(model: mujoco.MjModel, geoms: np.ndarray, dist: np.ndarray) -> str:
    if dist.size == 0:
        return "no contact"
    i = int(dist.argmin())
    a, b = (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(g)) for g in geoms[i])
    return f"deepest {dist[i]:+.4f} m ({a} / {b}), {dist.size} contacts"


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--state", type=Path, default=STATE)
    p.add_argument("--device", default="cpu", help="Warp device (cpu or cuda)")
    args = p.parse_args()
    saved = load_state(args.state)
    model = scene()
    for name, value in saved["fields"].items():  # the world's randomized friction, masses and gains
        getattr(model, name)[:] = np.asarray(value).reshape(getattr(model, name).shape)
    substeps = 4
    print(f"world {saved['world']} before step {saved['step']} (captured min contact depth {saved['min_dist']:+.3f} m)")

    data = mujoco.MjData(model)
    for name in ("qpos", "qvel", "qacc_warmstart"):
        getattr(data, name)[:] = saved["state"][name]
    data.ctrl[:] = saved["ctrl"]
    print("MuJoCo C:")
    for k in range(substeps):
        mujoco.mj_step(model, data)
        geoms = np.array([c.geom for c in data.contact[:data.ncon]]).reshape(-1, 2)
        dist = np.array([c.dist for c in data.contact[:data.ncon]])
        print(f"  substep {k + 1}: max |qvel| {np.abs(data.qvel).max():8.2f}; {deepest(model, geoms, dist)}")

    import torch

    from envs.physics.warp_setup import import_warp

    wp, mjw = import_warp()
    with wp.ScopedDevice(args.device):
        m = mjw.put_model(model)
        m.opt.warn_overflow = 0
        d = mjw.make_data(model, nworld=1)
        for name in ("qpos", "qvel", "qacc_warmstart"):
            wp.to_torch(getattr(d, name))[0] = torch.tensor(saved["state"][name])
        wp.to_torch(d.ctrl)[0] = torch.tensor(saved["ctrl"])
        print(f"MuJoCo Warp ({args.device}):")
        for k in range(substeps):
            mjw.step(m, d)
            n = int(d.nacon.numpy()[0])
            geoms, dist = d.contact.geom.numpy()[:n], d.contact.dist.numpy()[:n]
            qvel = d.qvel.numpy()[0]
            print(f"  substep {k + 1}: max |qvel| {np.abs(qvel).max():8.2f}; {deepest(model, geoms, dist)}; "
                  f"overflow flags {int(d.overflow.numpy()[0])}")


if __name__ == "__main__":
    main()
