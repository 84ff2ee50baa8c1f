"""A test agent that leaves a descendant behind: it forks a child that calls setsid() (so it is in
neither the agent's process group nor its session), holds the agent's stdio pipes and sleeps for
an hour, writes its pid to the file given as argument, and then the agent itself exits with an
error before answering anything."""

import os
import sys
import time

pid_file = sys.argv[1]
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:  # a grandchild, re-parented when its parent goes
        with open(pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(pid_file + ".tmp", pid_file)
        time.sleep(3600)
    os._exit(0)
os.waitpid(child, 0)
while not os.path.exists(pid_file):
    time.sleep(0.01)
print("orphaning agent: leaving a setsid grandchild behind", file=sys.stderr, flush=True)
sys.exit(4)
