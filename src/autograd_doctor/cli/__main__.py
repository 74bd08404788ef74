import sys

from autograd_doctor.cli import main

sys.exit(main())
