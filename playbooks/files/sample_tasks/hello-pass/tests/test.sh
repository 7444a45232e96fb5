#!/bin/bash
mkdir -p /logs/verifier
# The machine the trial container runs (x86_64 under qemu-user on an arm64 host): the arm64 test reads it.
uname -m > /logs/verifier/machine.txt
if [ "$(cat /testbed/answer.txt 2>/dev/null)" = hello ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
