#!/bin/bash
wc -l | tr -d " "
