"""Only what pyproject.toml cannot say: the startup hook's `.pth` goes to the root of the
wheel (site-packages itself), where Python reads it at every start-up. Its one line does
nothing unless AUTOGRAD_DOCTOR is set (see src/autograd_doctor/integrations/startup.py)."""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

STARTUP_HOOK = "autograd_doctor_startup.pth"


class build_py_with_startup_hook(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            self.copy_file(os.path.join("src", STARTUP_HOOK), os.path.join(self.build_lib, STARTUP_HOOK))

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, os.path.join(self.build_lib, STARTUP_HOOK)]


setup(cmdclass={"build_py": build_py_with_startup_hook})
