# A pure-Python loop for jitrace's stack tests and benchmarks: SECS seconds (argv[1], 3 by
# default) in burn(), no C extension between the interpreter and its work; prints the rounds
# it made and the CPU time it had for them (its throughput on a shared machine).
import sys
import time


def burn(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 3)
rounds = 0
while time.monotonic() < end:
    burn(20000)
    rounds += 1
print("rounds", rounds)
print("cpu_s", time.process_time())
