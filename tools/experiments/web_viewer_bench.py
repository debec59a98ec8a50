"""Measure ``play.py --web`` in a real headless browser: time to the first frame, updates per second, CPU share.

    python -m tools.experiments.web_viewer_bench --checkpoint runs/quadruped-flat/<run> [--num-envs 16]
                                                 [--screenshot page.png]
    python -m tools.experiments.web_viewer_bench --checkpoint runs/quadruped-rough/<run> --step-cost   # no browser

Starts Chromium (Debian's, software WebGL) first, then the server; from the moment the server prints its URL it
measures: the page's controls shown, the robot visible (the followed robot's colour in a screenshot of the
scene), then over ``--seconds`` the server's updates per second (its own count, shown on the page), the server's
CPU time per wall second (1.0 = one core) and the browser's frames per second; last, the server's CPU with the
tab closed. Prints one JSON object with the machine's load average. ``--step-cost`` instead times the viewer's
control step (policy + env step of every robot) in this process with 1 and 2 torch threads, no browser.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import time
from pathlib import Path

from apps.web import probe

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True, help="checkpoint file or run folder")
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--seconds", type=float, default=10.0, help="length of the rate and CPU measurement")
    p.add_argument("--screenshot", help="also save a PNG of the whole page here")
    p.add_argument("--forward", type=float, default=0.5, help="forward command set before the screenshot (m/s)")
    p.add_argument("--step-cost", action="store_true", help="time the control step with 1 and 2 torch threads")
    args = p.parse_args()
    if args.step_cost:
        print(json.dumps(step_cost(args.checkpoint, args.num_envs)))
        return
    missing = probe.browser_missing()
    if missing:
        raise SystemExit(f"error: no browser: {missing}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out: dict[str, object] = {"num_envs": args.num_envs, "load_average_before": os.getloadavg()}
    with probe.page(timeout_ms=180_000) as pg, probe.serving(
            ["--checkpoint", args.checkpoint, "--num-envs", str(args.num_envs), "--port", str(port)], ROOT) as server:
        url, t_url = server.wait_url(300)
        pg.goto(url)
        pg.get_by_text("Forward (m/s)").first.wait_for()
        out["controls_shown_s"] = round(time.perf_counter() - t_url, 2)
        probe.wait_for(lambda: probe.followed_pixels(probe.scene_shot(pg)) > 200, 180, "the robot", every=0.05)
        out["first_frame_s"] = round(time.perf_counter() - t_url, 2)
        probe.dismiss_notifications(pg)
        probe.set_slider(pg, "Forward (m/s)", args.forward)
        pg.evaluate("() => { window.__frames = 0; const f = () => { window.__frames++; requestAnimationFrame(f); };"
                    " requestAnimationFrame(f); }")
        time.sleep(2.0)  # the rate shown is over the last second
        cpu0, wall0, frames0 = server.cpu_seconds(), time.perf_counter(), pg.evaluate("() => window.__frames")
        rates = []
        while time.perf_counter() - wall0 < args.seconds:
            time.sleep(1.0)
            rates.append(probe.number(pg, "Updates/s") or 0.0)
        wall = time.perf_counter() - wall0
        out["server_updates_per_s"] = round(sum(rates) / len(rates), 1)
        out["server_cpu_share"] = round((server.cpu_seconds() - cpu0) / wall, 3)
        out["browser_frames_per_s"] = round((pg.evaluate("() => window.__frames") - frames0) / wall, 1)
        if args.screenshot:
            pg.screenshot(path=args.screenshot)
        pg.close()
        time.sleep(1.0)
        cpu0, wall0 = server.cpu_seconds(), time.perf_counter()
        time.sleep(3.0)
        out["server_cpu_share_tab_closed"] = round((server.cpu_seconds() - cpu0) / (time.perf_counter() - wall0), 3)
        out["exit_status_after_sigint"] = server.interrupt()
    out["load_average_after"] = os.getloadavg()
    print(json.dumps(out))


def step_cost(checkpoint: str, num_envs: int, steps: int = 100) -> dict[str, object]:
    """Milliseconds per control step of ``num_envs`` robots (Session.step) with 1 and 2 torch threads."""
    import torch

    import play
    from apps.web.session import Session, with_envs

    run = play.load_run(checkpoint)
    out: dict[str, object] = {"task": run.task, "num_envs": num_envs, "load_average_before": os.getloadavg()}
    for threads in (1, 2):
        session = Session(run, with_envs(run.cfg.env, num_envs),
                          lambda cfg: run.spec.make_env(cfg, torch.device("cpu")),
                          play.make_policy, lambda path: play.load_run(str(path), run.task), seed=1)
        torch.set_num_threads(threads)  # after Session, which sets the viewer's one thread
        session.hold((0.5, 0.0, 0.0, 0.0))
        for _ in range(10):
            session.step()
        start = time.perf_counter()
        for _ in range(steps):
            session.step()
        out[f"ms_per_step_{threads}_threads"] = round((time.perf_counter() - start) / steps * 1000, 2)
    out["load_average_after"] = os.getloadavg()
    return out


if __name__ == "__main__":
    main()
