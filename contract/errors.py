"""Errors that reach the user as one line (train.py / play.py print them and exit with status 2)."""

import argparse
import os
import sys
from collections.abc import Callable

EXIT_USAGE = 2


class UserError(Exception):
    """A problem caused by input (CLI value, config field, file). Its message is one complete line."""


class ConfigError(UserError):
    """A config field holds a value that is not allowed."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field, self.value, self.allowed = field, value, allowed
        super().__init__(f"config error: {field}={value!r} is not allowed; expected {allowed}")


class CheckpointError(UserError):
    """A checkpoint file is missing, corrupt, untrusted or does not fit the task."""


class TrainingFault(UserError):
    """Training cannot go on safely (non-finite loss, gradient or parameters); nothing bad was saved."""


def run_reporting_errors(fn: Callable[[], int], debug: bool) -> int:
    """Run a command; a UserError becomes one line on stderr and exit status 2 (a traceback only with --debug).
    Output piped into a reader that stopped early (``train.py --help | head``) ends the command quietly."""
    try:
        return fn()
    except UserError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # Python's advice: point stdout at devnull so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr and exit status 2 (instead of usage + message)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)
