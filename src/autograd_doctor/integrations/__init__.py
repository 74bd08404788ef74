"""Front ends that bring the doctor to where a program runs: the pytest plugin, Jupyter/IPython,
the Lightning and Hugging Face callbacks, torch.compile, the `AUTOGRAD_DOCTOR=1` start-up hook.

Each is a thin layer over `autograd_doctor.doctor`; the command line (`autograd_doctor.cli`)
is the other front end. The package imports nothing itself: the start-up hook imports its
own module only, at every Python start.
"""
