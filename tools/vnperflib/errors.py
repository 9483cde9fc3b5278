"""Host-side failures: the runner status to return and one clear line."""

import re

from . import exitcodes

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(text):
    """text with control characters escaped (\\x0a): what a guest printed or
    a file held cannot break or repaint the runner's one line."""
    return _CONTROL.sub(lambda m: "\\x%02x" % ord(m.group()), text)


class RunnerError(Exception):
    def __init__(self, status, line):
        line = printable(line)
        super().__init__(line)
        self.status = status
        self.line = line


def usage(line):
    return RunnerError(exitcodes.RUNNER_USAGE, line)


def missing(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_MISSING, line)


def failed(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_FAILED, line)
