import os
import sys

# doc_examples.py lives beside the tests that use it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
