"""Host-side failures: the runner status to return and one clear line."""

from . import exitcodes


class RunnerError(Exception):
    def __init__(self, status, line):
        super().__init__(line)
        self.status = status
        self.line = line


def usage(line):
    return RunnerError(exitcodes.RUNNER_USAGE, line)


def missing(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_MISSING, line)


def failed(line):
    return RunnerError(exitcodes.RUNNER_BACKEND_FAILED, line)
