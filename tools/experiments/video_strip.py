"""Frames of an MP4 side by side in one PNG (the stills of docs/motion.md).

    python -m tools.experiments.video_strip VIDEO.mp4 OUT.png [--frames 5]

The frames are spread evenly over the video (neither the first nor the last), each cut to its middle two thirds;
a strip wider than 1600 pixels is halved.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np


def strip(frames: list[np.ndarray], count: int) -> np.ndarray:
    """``count`` evenly spread frames (``[H, W, 3]``), each cut to its middle two thirds, side by side."""
    picks = np.linspace(0, len(frames) - 1, count + 2)[1:-1].astype(int)
    out = np.concatenate([frames[i][:, frames[i].shape[1] // 6: -(frames[i].shape[1] // 6)] for i in picks], axis=1)
    return out[::2, ::2] if out.shape[1] > 1600 else out


def main(argv: list[str] | None = None) -> int:
    import imageio.v2 as iio

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("video")
    p.add_argument("out")
    p.add_argument("--frames", type=int, default=5, help="how many frames (default 5)")
    args = p.parse_args(argv)
    reader: Any = iio.get_reader(args.video)
    frames = [frame for frame in reader]  # not list(reader): it asks the length, inf for ffmpeg
    iio.imwrite(args.out, strip(frames, args.frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
