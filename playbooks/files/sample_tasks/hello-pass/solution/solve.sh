#!/bin/bash
echo hello > /testbed/answer.txt
