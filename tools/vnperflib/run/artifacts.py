"""What `make` builds that a run needs on this host: the image (for --boot
uefi also the ESP, and Debian's OVMF) and the programs of build/ that its
backends start. Checked last, after every option, combination and host
refusal, so that a bad command line is refused alike with or without a
build (and the runner's own tests need none)."""

import os

from ..errors import missing, usage
from . import qemucmd


def check(opts, bes, images=None, local=True):
    """Raises the first thing missing: an image, ESP or OVMF file (status
    64) or a backend's program (status 67). images: every image of a sweep
    (default: opts.image); local=False: the engine's host holds them."""
    if local:
        for image in images or [opts.image]:
            if not (os.path.isfile(image) and os.access(image, os.R_OK)):
                raise usage("image %s not found or unreadable (build it with make)" % image)
        if opts.boot == "uefi":
            for path, what in ((opts.esp, "ESP image %s not found (build it with make)"),
                               (qemucmd.DEFAULT_OVMF,
                                "OVMF firmware %s not found (apt-get install ovmf)")):
                if not os.path.isfile(path):
                    raise usage(what % path)
    for be in bes:
        for what, path in be.programs():
            if not os.access(path, os.X_OK):
                raise missing("%s: %s %s missing (run make)" % (be.name, what, path))
