"""Robot models written in this repository (MJCF) and their constants. Nothing is downloaded at run time."""
