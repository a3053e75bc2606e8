"""Started by Python before the program: lets the stub serve missing packages.

Unknown submodules of the stub torch and torchvision, and the third-party
packages named in STUBTORCH_PERMISSIVE (comma-separated; plotting, image and
metrics libraries the programs import at start-up), become permissive stubs.
"""

import os

import stubrec

_extra = [n for n in os.environ.get("STUBTORCH_PERMISSIVE", "").split(",") if n]
stubrec.install_permissive(["torch", "torchvision"] + _extra)
