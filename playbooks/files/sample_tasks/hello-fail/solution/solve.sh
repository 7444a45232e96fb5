#!/bin/bash
echo goodbye > /testbed/answer.txt
