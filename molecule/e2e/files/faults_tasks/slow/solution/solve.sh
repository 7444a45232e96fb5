#!/bin/bash
# Long enough for the runtime container to be killed while this trial runs.
sleep 60
echo hello > /testbed/answer.txt
