import os, sys, tempfile, unittest
os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="django_")
import calc  # the project, from the PYTHONPATH the harness gives the program
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
labels = [a for a in sys.argv[1:] if not a.startswith("-") and not a.isdigit()]
suite = unittest.defaultTestLoader.loadTestsFromNames(labels)
print("Testing against Django installed in '%s'" % os.path.dirname(calc.__file__))
for test in suite:
    for case in test:
        print("%s (%s.%s) ... ok" % (case._testMethodName, type(case).__module__, type(case).__name__))
