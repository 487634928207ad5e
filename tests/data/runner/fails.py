import sys
print("about to fail", flush=True)
sys.stderr.write("RuntimeError: the backend broke\n")
sys.exit(3)
