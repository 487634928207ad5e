"""Starts a child that ignores nothing and sleeps, then sleeps itself: Stop must end both."""
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(f"child {child.pid}", flush=True)
time.sleep(600)
